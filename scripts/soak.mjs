// A mixed soak against the packaged server (signin, signup, list and get reads, PATCH), sampling
// RSS and open file descriptors; prints them and the count of 5xx answers (expected: 0).
// Usage: node scripts/soak.mjs [--minutes 5] [--cost 11]
import fs from 'node:fs';
import { benchServeArgs, spawnJsonLine } from './process.mjs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const MINUTES = arg('minutes', 5);
const COST = arg('cost', 11);
const PW = 'soak test password 1';
const mib = (b) => (b / 1048576).toFixed(1);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-soak-'));
const server = spawnJsonLine(path.join(root, 'dist', 'gatehouse'), benchServeArgs(dataDir, COST));
const child = server.child;
const url = await server.ready;

const counts = { total: 0, s5xx: 0, s4xx: 0, errors: 0 };
async function call(method, p, body, token) {
  counts.total++;
  try {
    const res = await fetch(url + p, {
      method,
      headers: {
        'content-type': p.startsWith('/api/') ? 'application/vnd.api+json' : 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 500) counts.s5xx++;
    else if (res.status >= 400) counts.s4xx++;
    return { status: res.status, body: await res.json().catch(() => null) };
  } catch {
    counts.errors++;
    return { status: 0, body: null };
  }
}

await call('POST', '/action/user_account/signup', { attributes: { email: 'admin@soak.example', name: 'Admin', password: PW, passwordConfirm: PW } });
const admin = (await call('POST', '/action/user_account/signin', { attributes: { email: 'admin@soak.example', password: PW } })).body[0].Attributes.value;
const actionId = (await call('GET', '/api/action?filter=signup', undefined, admin)).body.data[0].id;
const labelId = (await call('GET', '/api/action?filter=signout', undefined, admin)).body.data[0].id;
await call('PATCH', `/api/action/${actionId}`, { data: { type: 'action', id: actionId, attributes: { permission: 2097057 } }, meta: {} }, admin);
const me = (await call('GET', '/api/user_account', undefined, admin)).body.data[0].id;

const until = Date.now() + MINUTES * 60_000;
const samples = [];
const fds = () => fs.readdirSync(`/proc/${child.pid}/fd`).length;
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) * 1024;
const sampler = setInterval(() => samples.push({ t: Math.round((Date.now() - (until - MINUTES * 60_000)) / 1000), rss: rss(), fds: fds() }), 5000);

let n = 0;
const loop = async (fn) => {
  while (Date.now() < until) await fn();
};
await Promise.all([
  ...Array.from({ length: 4 }, () => loop(() => call('POST', '/action/user_account/signin', { attributes: { email: 'admin@soak.example', password: PW } }))),
  ...Array.from({ length: 2 }, () =>
    loop(() => {
      const i = n++;
      return call('POST', '/action/user_account/signup', { attributes: { email: `u${i}@soak.example`, name: `U${i}`, password: PW, passwordConfirm: PW } });
    }),
  ),
  ...Array.from({ length: 6 }, () => loop(() => call('GET', '/api/action?filter=signup', undefined, admin))),
  ...Array.from({ length: 4 }, () => loop(() => call('GET', `/api/user_account/${me}`, undefined, admin))),
  loop(() =>
    call('PATCH', `/api/action/${labelId}`, { data: { type: 'action', id: labelId, attributes: { label: `Sign out everywhere ${n % 7}` } }, meta: {} }, admin),
  ),
]);
clearInterval(sampler);
child.kill('SIGTERM');
await new Promise((r) => child.once('exit', r));
fs.rmSync(dataDir, { recursive: true, force: true });

const first = samples[Math.min(2, samples.length - 1)];
const last = samples[samples.length - 1];
console.log(`soak: ${MINUTES} min, ${counts.total} requests, 5xx ${counts.s5xx}, 4xx ${counts.s4xx}, connection errors ${counts.errors}`);
console.log(`RSS MiB: after warm-up ${mib(first.rss)}, end ${mib(last.rss)}, max ${mib(Math.max(...samples.map((s) => s.rss)))}`);
console.log(`open fds: after warm-up ${first.fds}, end ${last.fds}, max ${Math.max(...samples.map((s) => s.fds))}`);
console.log(
  'samples (s, RSS MiB, fds): ' +
    samples
      .filter((_, i) => i % 6 === 0)
      .map((s) => `${s.t}:${mib(s.rss)}:${s.fds}`)
      .join(' '),
);
process.exit(counts.s5xx === 0 && counts.errors === 0 ? 0 : 1);
