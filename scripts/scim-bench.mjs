// SCIM figures on one run (never pass/fail), with the packaged executable on its default SQLite
// store holding `--accounts` people (made through POST /scim/v2/Users):
//   lookup   GET /scim/v2/Users?filter=userName eq "…" (what Okta and Entra ID send before every
//            create) beside GET /api/user_account/<id> (the same account through the record API),
//            in alternating turns, `--connections` at a time
//   push     a push target added (scim target add) to an app served by scimmy (the test suite's
//            target, in this process): time until the app holds every person
// Usage: node --import tsx scripts/scim-bench.mjs [--accounts 10000 --duration 5 --connections 4 --no-push]
// (tsx: the app is the tests' TypeScript helper). With --accounts 100000 the lookup's rate is
// compared with 10,000's to show it stays flat (an indexed lookup, not a scan).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuOf, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ACCOUNTS = arg('accounts', 10_000);
const DURATION = arg('duration', 5);
const CONNECTIONS = arg('connections', 4);
const PASSWORD = 'benchmark password 1234';

async function measure(pid, once) {
  let n = 0;
  const cpu0 = cpuOf(pid);
  const until = performance.now() + DURATION * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        await once();
        n++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuOf(pid);
  return { rps: n / seconds, cpu: ((cpu1.main - cpu0.main + cpu1.others - cpu0.others) * 1000) / n };
}

async function main() {
  const exe = path.join(root, 'dist', 'gatehouse');
  if (!fs.existsSync(exe)) throw new Error('dist/gatehouse is missing: run npm run build first');
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; node ${process.version}; ${ACCOUNTS} accounts; ${DURATION} s per turn`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-scim-bench-'));
  const cli = ['--data-dir', dataDir];
  const env = { ...process.env, BENCH_PW: PASSWORD };
  execFileSync(exe, [...cli, 'bootstrap-admin', '--email', 'bench@example.com', '--password-env', 'BENCH_PW'], { env, stdio: 'ignore' });
  const token = JSON.parse(execFileSync(exe, [...cli, '--json', 'scim', 'token', 'add', '--name', 'bench'], { env, encoding: 'utf8' })).token;
  const server = spawnJsonLine(exe, ['serve', '--port', '0', ...cli, '--bcrypt-cost', '4', '--no-rate-limits', '--webhook-allow-private', 'loopback']);
  try {
    const url = await server.ready;
    const scim = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ACCOUNTS) {
          const i = next++;
          const res = await fetch(`${url}/scim/v2/Users`, {
            method: 'POST',
            headers: scim,
            body: JSON.stringify({ userName: `u${i}@bench.example`, emails: [{ value: `u${i}@bench.example` }], displayName: `User ${i}` }),
          });
          if (res.status !== 201) throw new Error(`POST /Users: ${res.status} ${await res.text()}`);
          await res.arrayBuffer();
        }
      }),
    );
    const made = (performance.now() - t0) / 1000;
    console.log(`made ${ACCOUNTS} accounts through POST /scim/v2/Users, 8 at a time: ${(ACCOUNTS / made).toFixed(0)} /s`);

    const signin = await fetch(`${url}/action/user_account/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: { email: 'bench@example.com', password: PASSWORD } }),
    });
    const adminToken = (await signin.json()).find((x) => x.ResponseType === 'client.store.set' && x.Attributes.key === 'token')?.Attributes.value;
    if (!adminToken) throw new Error('the benchmark account did not sign in');
    const ids = [];
    for (let i = 0; i < 200; i++) {
      const k = Math.floor((i * ACCOUNTS) / 200);
      const r = await fetch(`${url}/scim/v2/Users?filter=${encodeURIComponent(`userName eq "u${k}@bench.example"`)}`, { headers: scim });
      ids.push([k, (await r.json()).Resources[0].id]);
    }
    let turn = 0;
    const lookup = async () => {
      const [k] = ids[turn++ % ids.length];
      const r = await fetch(`${url}/scim/v2/Users?filter=${encodeURIComponent(`userName eq "u${k}@bench.example"`)}`, { headers: scim });
      if (r.status !== 200) throw new Error(`lookup: ${r.status}`);
      await r.arrayBuffer();
    };
    const apiGet = async () => {
      const [, id] = ids[turn++ % ids.length];
      const r = await fetch(`${url}/api/user_account/${id}`, { headers: { authorization: `Bearer ${adminToken}` } });
      if (r.status !== 200) throw new Error(`/api get: ${r.status}`);
      await r.arrayBuffer();
    };
    for (let i = 0; i < 50; i++) await Promise.all([lookup(), apiGet()]);
    const pid = server.child.pid;
    const rounds = { lookup: [], api: [] };
    for (let round = 0; round < 2; round++) {
      rounds.lookup.push(await measure(pid, lookup));
      rounds.api.push(await measure(pid, apiGet));
    }
    const best = (list) => list.reduce((a, b) => (b.rps > a.rps ? b : a));
    const l = best(rounds.lookup);
    const a = best(rounds.api);
    console.log(`SCIM userName eq lookup, ${CONNECTIONS} at a time     ${l.rps.toFixed(0).padStart(6)} /s  server CPU ${l.cpu.toFixed(0)} µs each`);
    console.log(`/api get of the same accounts, ${CONNECTIONS} at a time ${a.rps.toFixed(0).padStart(6)} /s  server CPU ${a.cpu.toFixed(0)} µs each`);
    console.log(`lookup / api get: ${(l.rps / a.rps).toFixed(2)} (best of two alternating turns each)`);

    if (process.argv.includes('--no-push')) return;
    const { startScimTarget } = await import('../test/helpers/scim-target.ts');
    const target = await startScimTarget({ teardown() {} });
    const p0 = performance.now();
    execFileSync(exe, [...cli, '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', target.url, '--token-stdin', '--name', 'bench'], {
      env,
      input: target.token,
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    const everyone = ACCOUNTS + 1;
    while (target.store.users.size < everyone) {
      if (performance.now() - p0 > 30 * 60_000) throw new Error(`the push stalled at ${target.store.users.size} of ${everyone}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const pushed = (performance.now() - p0) / 1000;
    console.log(`push of ${everyone} people to a scimmy target: converged in ${pushed.toFixed(1)} s (${(everyone / pushed).toFixed(0)} people/s)`);
    await target.down();
  } finally {
    await stop(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
