// What one costly LDAP search does to everyone else (figures, never pass/fail): the packaged
// executable with 1,000 managed groups nested about six deep (each inside one of a third as many
// above it) and 1,000 people in the bottom groups, then 8 connections of a directory reader each
// sending, again and again, a filter of 4,000 in-chain terms over the whole tree:
//   (!(|(memberOf:1.2.840.113556.1.4.1941:=cn=g0,ou=groups,…)(…:=cn=g1,…)…))
// Printed, before the attack and during it: the time to answer GET /ping (the event loop's
// latency as a client sees it), GET /api/me and a password sign-in (p50, p99, max), and the
// searches answered per second with their result codes (success, adminLimitExceeded,
// timeLimitExceeded). SQLite by default; --db postgres://… for PostgreSQL (a fresh database).
// Usage: node scripts/ldap-filter-bench.mjs [--exe dist/gatehouse] [--db URL] [--duration 6]
//        [--connections 8] [--terms 4000] [--groups 1000] [--people 1000]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'ldapts';
import { benchServeArgs, freePort, freshPgDatabase, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const EXE = arg('exe', path.join(root, 'dist', 'gatehouse'));
const PG = arg('db', null);
const DURATION = Number(arg('duration', 6));
const CONNECTIONS = Number(arg('connections', 8));
const TERMS = Number(arg('terms', 4000));
const GROUPS = Number(arg('groups', 1000));
const PEOPLE = Number(arg('people', 1000));
const PASSWORD = 'benchmark password 1234';
const BASE = 'dc=example,dc=com';
const BRANCHING = 3;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ldap-filter-'));
const db = PG ? await freshPgDatabase(PG, 'gh_ldap_filter_bench') : null;
const storeArgs = db ? ['--db', db.url] : [];
const cli = (...args) =>
  execFileSync(EXE, ['--data-dir', dir, ...storeArgs, ...args], { encoding: 'utf8', env: { ...process.env, PW: PASSWORD }, maxBuffer: 64 << 20 });

// The store: the people as a CSV import, each in one bottom group, then the groups' nesting as a
// configuration file (group i is inside group (i - 1) / 3).
cli('bootstrap-admin', '--email', 'admin@bench.example', '--password-env', 'PW');
const app = JSON.parse(cli('--json', 'user', 'app-password', 'add', 'admin@bench.example', '--name', 'bench')).secret;
const inner = (i) => Array.from({ length: BRANCHING }, (_, k) => BRANCHING * i + k + 1).filter((j) => j < GROUPS);
const yaml = [
  'version: 1',
  'groups:',
  ...Array.from(
    { length: GROUPS },
    (_, i) =>
      `  - name: g${i}\n    groups: [${inner(i)
        .map((j) => `g${j}`)
        .join(', ')}]`,
  ),
];
fs.writeFileSync(path.join(dir, 'groups.yaml'), yaml.join('\n') + '\n');
const bottom = Array.from({ length: GROUPS }, (_, i) => i).filter((i) => inner(i).length === 0);
const csv = ['email,name,username,groups', ...Array.from({ length: PEOPLE }, (_, i) => `p${i}@bench.example,Person ${i},p${i},g${bottom[i % bottom.length]}`)];
fs.writeFileSync(path.join(dir, 'people.csv'), csv.join('\n') + '\n');
cli('import', '--from', 'csv', path.join(dir, 'people.csv'));
cli('config', 'apply', path.join(dir, 'groups.yaml'));

const ldapPort = await freePort();
const server = spawnJsonLine(EXE, [...benchServeArgs(dir, 4, '--ldap-port', String(ldapPort), '--ldap-base-dn', BASE), ...storeArgs]);
const url = await server.ready;

const signin = async () => {
  const res = await fetch(`${url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'admin@bench.example', password: PASSWORD } }),
  });
  const items = await res.json();
  return items.find((i) => i.Attributes.key === 'token').Attributes.value;
};
const token = await signin();

/** Latencies of one request sent again as soon as it is answered, for `ms`. */
async function probe(name, send, ms) {
  const took = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const t0 = performance.now();
    await send();
    took.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  took.sort((a, b) => a - b);
  const at = (q) => took[Math.min(took.length - 1, Math.floor(q * took.length))];
  return `${name.padEnd(8)} p50 ${at(0.5).toFixed(1).padStart(7)} ms  p99 ${at(0.99).toFixed(1).padStart(7)} ms  max ${took[took.length - 1].toFixed(1).padStart(7)} ms  (${took.length})`;
}
const probes = (ms) =>
  Promise.all([
    probe('/ping', () => fetch(`${url}/ping`).then((r) => r.text()), ms),
    probe('/api/me', () => fetch(`${url}/api/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text()), ms),
    probe('sign-in', signin, ms),
  ]);

const filter = `(!(|${Array.from({ length: TERMS }, (_, i) => `(memberOf:1.2.840.113556.1.4.1941:=cn=g${i % GROUPS},ou=groups,${BASE})`).join('')}))`;
let stopping = false;
const outcomes = new Map();
async function attacker() {
  const client = new Client({ url: `ldap://127.0.0.1:${ldapPort}`, timeout: 120_000 });
  await client.bind(`uid=admin,ou=people,${BASE}`, app);
  while (!stopping) {
    let code = 'success';
    try {
      await client.search(BASE, { filter, attributes: ['1.1'] });
    } catch (err) {
      code = err.constructor?.name ?? String(err.code);
    }
    outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
  }
  await client.unbind().catch(() => {});
}

console.log(`${GROUPS} groups nested ${Math.ceil(Math.log(GROUPS) / Math.log(BRANCHING))} deep, ${PEOPLE} people, ${db ? 'PostgreSQL' : 'SQLite'}`);
console.log(`idle:`);
for (const line of await probes(DURATION * 500)) console.log(`  ${line}`);
const started = Date.now();
const attackers = Array.from({ length: CONNECTIONS }, attacker);
await new Promise((r) => setTimeout(r, 500));
console.log(`${CONNECTIONS} connections, each sending a filter of ${TERMS} in-chain terms over the whole tree:`);
for (const line of await probes(DURATION * 1000)) console.log(`  ${line}`);
stopping = true;
await Promise.all(attackers);
const seconds = (Date.now() - started) / 1000;
const answered = [...outcomes.values()].reduce((a, b) => a + b, 0);
console.log(`  searches ${(answered / seconds).toFixed(1)}/s: ${[...outcomes].map(([k, v]) => `${k} ${v}`).join(', ')}`);
await stop(server.child);
await db?.drop();
if (process.argv.includes('--keep')) console.log(`kept ${dir}`);
else fs.rmSync(dir, { recursive: true, force: true });
