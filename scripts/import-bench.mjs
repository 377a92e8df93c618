// What `gatehouse import` costs (figures, never pass/fail): the packaged executable imports a CSV of
// generated people into a fresh store, at several sizes, then imports the same file again (which
// changes nothing). Each person has a bcrypt hash (cost 4; an import only reads a hash, it never
// checks one), a username and two of 20 groups, so a person makes three audit rows
// (account_imported and two group_member_added), as an export of a real directory would.
// Printed per size: wall time, people/s, the command's CPU seconds and peak RSS (VmHWM), and each
// rate as a fraction of the smallest size's (near 1.0: the import is linear in the number of
// people). On a shared machine, people per CPU second says more than people per second.
// The CSV of the largest size is made once and kept in the temp folder (its prefixes are the
// smaller sizes); --fresh makes it again.
// Usage: node scripts/import-bench.mjs [--exe dist/gatehouse] [--sizes 10000,50000,100000] [--fresh]
//        [--pg postgres://postgres@127.0.0.1:5432/test]   (a fresh database per size, dropped after)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcrypt';
import { freshPgDatabase, measureCommand } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EXE = path.resolve(arg('exe', path.join(root, 'dist', 'gatehouse')));
const SIZES = arg('sizes', '10000,50000,100000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .sort((a, b) => a - b);
const PG = arg('pg', null);
const GROUPS = 20;
const PASSWORD = 'benchmark password 1234';

/** The CSV of `size` people, made once (hashes in parallel on libuv's threads). */
async function csvOf(size) {
  const file = path.join(os.tmpdir(), `gatehouse-import-bench-${size}.csv`);
  if (fs.existsSync(file) && !process.argv.includes('--fresh')) return file;
  const t0 = performance.now();
  const hashes = new Array(size);
  let next = 0;
  const worker = async () => {
    while (next < size) {
      const i = next++;
      hashes[i] = await bcrypt.hash(`${PASSWORD} ${i}`, 4);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const lines = ['email,name,username,groups,password_hash'];
  for (let i = 0; i < size; i++) lines.push(`person${i}@import.example,Person ${i},person${i},team${i % GROUPS};site${(i * 7) % GROUPS},${hashes[i]}`);
  fs.writeFileSync(`${file}.tmp`, lines.join('\n') + '\n');
  fs.renameSync(`${file}.tmp`, file);
  console.log(`made ${file} (${size} people) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return file;
}

/** The first `size` people of the CSV. */
function prefix(file, size, dir) {
  const out = path.join(dir, `people-${size}.csv`);
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  fs.writeFileSync(out, lines.slice(0, size + 1).join('\n') + '\n');
  return out;
}

/** Runs the executable: its wall time, peak RSS, CPU time and output (scripts/process.mjs). */
const run = (args) => measureCommand(EXE, args);

async function freshStore(size) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-import-bench-${size}-`));
  if (!PG) return { dir, flags: ['--data-dir', dir], drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  const db = await freshPgDatabase(PG, `gh_import_bench_${process.pid}_${size}`);
  return {
    dir,
    flags: ['--data-dir', dir, '--db', db.url],
    drop: async () => {
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function measure(size, csv) {
  const store = await freshStore(size);
  try {
    const file = prefix(csv, size, store.dir);
    return await measureIn(store, file, size);
  } finally {
    await store.drop();
  }
}

async function measureIn(store, file, size) {
  // The administrator the import runs beside (an import never touches one); not timed.
  await new Promise((resolve, reject) => {
    const c = spawn(EXE, [...store.flags, 'bootstrap-admin', '--email', 'admin@bench.example', '--password-env', 'PW'], {
      stdio: 'ignore',
      env: { ...process.env, PW: PASSWORD },
    });
    c.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bootstrap-admin: exit ${code}`))));
  });
  const first = await run([...store.flags, '--json', 'import', '--from', 'csv', file]);
  const a = JSON.parse(first.stdout);
  if (a.created !== size) throw new Error(`expected ${size} created, the report says ${a.created} (skipped ${a.skipped})`);
  const again = await run([...store.flags, '--json', 'import', '--from', 'csv', file]);
  const b = JSON.parse(again.stdout);
  if (b.created !== 0 || b.updated !== 0 || b.unchanged !== size)
    throw new Error(`the same file again changed something: ${JSON.stringify({ ...b, people: undefined, groups: undefined })}`);
  const stats = JSON.parse((await run([...store.flags, '--json', 'stats'])).stdout);
  return { size, first, again, bytes: stats.store.bytes };
}

const fmt = (n, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (kib) => `${(kib / 1024).toFixed(0)} MiB`;

async function main() {
  const load = () => os.loadavg()[0].toFixed(1);
  console.log(`gatehouse import --from csv: ${EXE}, store ${PG ? 'PostgreSQL' : 'SQLite'}, ${os.availableParallelism()} cores, load average ${load()}`);
  const csv = await csvOf(SIZES[SIZES.length - 1]);
  const rows = [];
  for (const size of SIZES) {
    const r = await measure(size, csv);
    rows.push(r);
    console.log(
      `${fmt(size).padStart(8)} people: import ${(r.first.ms / 1000).toFixed(1)} s (${fmt(size / (r.first.ms / 1000))} people/s, ${r.first.cpu.toFixed(1)} s CPU, peak RSS ${mib(r.first.peakKiB)}); ` +
        `again ${(r.again.ms / 1000).toFixed(1)} s (${fmt(size / (r.again.ms / 1000))} people/s, ${r.again.cpu.toFixed(1)} s CPU, peak RSS ${mib(r.again.peakKiB)}); store ${mib(r.bytes / 1024)}; load average ${load()}`,
    );
  }
  const base = rows[0];
  const rate = (r, k) => r.size / r[k].ms;
  const perCpu = (r, k) => r.size / r[k].cpu;
  console.log('\n    size  import/s  vs smallest  per CPU s  vs smallest  peak RSS   again/s  vs smallest  peak RSS');
  for (const r of rows)
    console.log(
      `${fmt(r.size).padStart(8)}  ${fmt(r.size / (r.first.ms / 1000)).padStart(8)}  ${(rate(r, 'first') / rate(base, 'first')).toFixed(2).padStart(11)}  ` +
        `${fmt(perCpu(r, 'first')).padStart(9)}  ${(perCpu(r, 'first') / perCpu(base, 'first')).toFixed(2).padStart(11)}  ${mib(r.first.peakKiB).padStart(8)}  ` +
        `${fmt(r.size / (r.again.ms / 1000)).padStart(8)}  ${(rate(r, 'again') / rate(base, 'again')).toFixed(2).padStart(11)}  ${mib(r.again.peakKiB).padStart(8)}`,
    );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
