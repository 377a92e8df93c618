// What `gatehouse config apply` costs (figures, never pass/fail): the packaged executable applies
// a generated file of N objects to a fresh SQLite store, at several sizes, then the same file again
// (which changes nothing), then the file with a tenth of its objects changed. The objects are
// those a file holds most: groups (two fifths, nested in chains of ten, each inside the one above
// it), OpenID Connect clients (a fifth), forward-auth apps (three tenths, each open to a group)
// and webhooks (a tenth).
// Printed per size: wall time, the command's CPU seconds and peak RSS, and the CPU per object
// beyond what applying an empty file costs (starting the executable, opening the store), beside
// the smallest size's (near 1.0: the apply is linear in the number of objects).
// Usage: node scripts/config-bench.mjs [--exe dist/gatehouse] [--sizes 250,500,1000,2000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCommand } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EXE = path.resolve(arg('exe', path.join(root, 'dist', 'gatehouse')));
const SIZES = arg('sizes', '250,500,1000,2000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .sort((a, b) => a - b);
const env = {
  ...process.env,
  BENCH_CLIENT_SECRET: 'bench-client-secret-0123456789abcdef',
  BENCH_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
};

/** The file of `n` objects; `edition` > 0 renames a tenth of the groups' display of each kind. */
function configOf(n, edition = 0) {
  const groups = Math.round(n * 0.4);
  const clients = Math.round(n * 0.2);
  const apps = Math.round(n * 0.3);
  const hooks = n - groups - clients - apps;
  const changed = (i) => edition > 0 && i % 10 === 0;
  if (n === 0) return 'version: 1\n';
  const lines = ['version: 1', 'groups:'];
  for (let i = 0; i < groups; i++) {
    lines.push(`  - name: team-${i}`);
    if (i % 10 !== 9 && i + 1 < groups) lines.push(`    groups: [team-${i + 1}]`);
  }
  lines.push('oidc_clients:');
  for (let i = 0; i < clients; i++) {
    lines.push(`  - client_id: app-${i}`, `    name: ${changed(i) ? 'Renamed app' : 'App'} ${i}`, '    secret: {env: BENCH_CLIENT_SECRET}');
    lines.push(`    redirect_uris: [https://app-${i}.example.com/callback]`, `    allowed_groups: [team-${i % groups}]`);
  }
  lines.push('forward_apps:');
  for (let i = 0; i < apps; i++) lines.push(`  - host: site-${i}.example.com`, `    allowed_groups: [team-${(changed(i) ? i + 1 : i) % groups}]`);
  lines.push('webhooks:');
  for (let i = 0; i < hooks; i++) {
    lines.push(`  - url: https://hooks-${i}.example.com/gatehouse`, `    events: [${changed(i) ? 'account.created, account.deleted' : 'account.created'}]`);
    lines.push('    secret: {env: BENCH_WEBHOOK_SECRET}');
  }
  return lines.join('\n') + '\n';
}

async function measure(n) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-config-bench-${n}-`));
  try {
    const flags = ['--data-dir', dir];
    await measureCommand(EXE, [...flags, 'migrate'], env); // the store made first, not counted
    const file = path.join(dir, 'gatehouse.yaml');
    fs.writeFileSync(file, configOf(n));
    const first = await measureCommand(EXE, [...flags, 'config', 'apply', file], env);
    const again = await measureCommand(EXE, [...flags, 'config', 'apply', file], env);
    fs.writeFileSync(file, configOf(n, 1));
    const tenth = await measureCommand(EXE, [...flags, 'config', 'apply', file], env);
    const plan = await measureCommand(EXE, [...flags, 'config', 'plan', file], env);
    return { n, first, again, tenth, plan };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;
console.log(`gatehouse config apply: ${EXE}, SQLite, ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(1)}`);
const rows = [];
for (const n of SIZES) {
  const r = await measure(n);
  rows.push(r);
  console.log(
    `${String(n).padStart(6)} objects: apply ${s(r.first.ms)} (${r.first.cpu.toFixed(2)} s CPU, peak RSS ${mib(r.first.peakKiB)}); ` +
      `again ${s(r.again.ms)} (${r.again.cpu.toFixed(2)} s CPU); a tenth changed ${s(r.tenth.ms)} (${r.tenth.cpu.toFixed(2)} s CPU); plan ${s(r.plan.ms)}`,
  );
}
// What any apply costs before its first object: a file with none, to a fresh store.
const empty = await measure(0);
const fixed = Math.min(empty.first.cpu, empty.again.cpu);
console.log(`     0 objects: apply ${s(empty.first.ms)} (${empty.first.cpu.toFixed(2)} s CPU): the cost of any apply, taken off below`);
const base = rows[0];
const perObject = (r, k) => (Math.max(r[k].cpu - fixed, 0) * 1e3) / r.n; // ms of CPU per object
const ratio = (r, k) => (perObject(base, k) > 0 ? perObject(r, k) / perObject(base, k) : NaN);
console.log('\n objects   apply  CPU ms/object  vs smallest   again  CPU ms/object  vs smallest  tenth changed  CPU ms/object  peak RSS');
for (const r of rows)
  console.log(
    `${String(r.n).padStart(8)}  ${s(r.first.ms).padStart(6)}  ${perObject(r, 'first').toFixed(2).padStart(13)}  ${ratio(r, 'first').toFixed(2).padStart(11)}  ` +
      `${s(r.again.ms).padStart(6)}  ${perObject(r, 'again').toFixed(2).padStart(13)}  ${ratio(r, 'again').toFixed(2).padStart(11)}  ${s(r.tenth.ms).padStart(13)}  ${perObject(r, 'tenth').toFixed(2).padStart(13)}  ${mib(r.first.peakKiB).padStart(8)}`,
  );
