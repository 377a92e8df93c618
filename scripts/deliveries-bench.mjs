// The delivery queue's cost and speed (figures, never pass/fail), in one run, on the packaged
// executable with its default SQLite store:
//   signups per second at the default bcrypt cost with 0, 1 and 3 webhooks registered (the queue
//   write is part of the signup's audit write: its share of a signup);
//   delivery at idle: signups one at a time, the delay from the event's timestamp (taken in the
//   transaction that queues it) to its arrival at a local receiver, p50 and p99;
//   delivery throughput: a burst of signups at bcrypt cost 4, messages per second from the first
//   commit to the last arrival.
// Usage: node scripts/deliveries-bench.mjs [--duration 10 --connections 8]   (npm run bench runs it too)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchServeArgs, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSWORD = 'benchmark password 1234';

function receiver() {
  const arrivals = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      arrivals.push({ at: Date.now(), timestamp: Date.parse(JSON.parse(body).timestamp) });
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/hook`, arrivals, server })));
}

async function startGatehouse(cost) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-deliveries-bench-'));
  const exe = path.join(root, 'dist', 'gatehouse');
  const dataDir = path.join(dir, 'data');
  // The receivers listen on loopback: allowed as webhook targets only when the operator says so.
  const allow = { GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'loopback' };
  const cli = (...args) => execFileSync(exe, ['--data-dir', dataDir, ...args], { encoding: 'utf8', env: { ...process.env, ...allow, PW: PASSWORD } });
  cli('bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW');
  cli('action', 'set-permission', 'signup', '--guest', 'on');
  const server = spawnJsonLine(exe, benchServeArgs(dataDir, cost, '--webhook-allow-private', 'loopback'));
  const url = await server.ready;
  return { url, cli, child: server.child, dir };
}

let counter = 0;
const signupBody = () =>
  JSON.stringify({ attributes: { email: `b${++counter}-${process.pid}@example.com`, name: 'B', password: PASSWORD, passwordConfirm: PASSWORD } });

function signupLoad(url, duration, connections) {
  return new Promise((resolve, reject) =>
    autocannon(
      {
        url: `${url}/action/user_account/signup`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        duration,
        connections,
        requests: [{ setupRequest: (req) => ({ ...req, body: signupBody() }) }],
      },
      (err, r) => (err ? reject(err) : resolve({ rps: r.requests.average, non2xx: r.non2xx, total: r.requests.total })),
    ),
  );
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

export async function deliveryFigures({ duration = 10, connections = 8 } = {}) {
  const out = {};
  // 1. Signups at the default cost with 0, 1 and 3 webhooks.
  const receivers = [await receiver(), await receiver(), await receiver()];
  for (const hooks of [0, 1, 3]) {
    const g = await startGatehouse(11);
    for (const r of receivers.slice(0, hooks)) g.cli('webhook', 'add', '--url', r.url, '--event', 'account.created');
    out[`signups_${hooks}`] = await signupLoad(g.url, duration, connections);
    await stop(g.child);
    fs.rmSync(g.dir, { recursive: true, force: true });
  }
  // 2. Delay at idle, one signup at a time; 3. throughput in a burst (cost 4).
  const r = await receiver();
  const g = await startGatehouse(4);
  g.cli('webhook', 'add', '--url', r.url, '--event', 'account.created');
  for (let i = 0; i < 60; i++) {
    await fetch(`${g.url}/action/user_account/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: signupBody() });
    await new Promise((res) => setTimeout(res, 50));
  }
  await new Promise((res) => setTimeout(res, 1500));
  const delays = r.arrivals.map((a) => a.at - a.timestamp);
  out.idle = { messages: delays.length, p50: pct(delays, 50), p99: pct(delays, 99) };
  r.arrivals.length = 0;
  const burst = await signupLoad(g.url, Math.min(duration, 5), 16);
  const until = Date.now() + 60_000;
  while (r.arrivals.length < burst.total - burst.non2xx && Date.now() < until) await new Promise((res) => setTimeout(res, 100));
  const first = Math.min(...r.arrivals.map((a) => a.timestamp));
  const last = Math.max(...r.arrivals.map((a) => a.at));
  const burstDelays = r.arrivals.map((a) => a.at - a.timestamp);
  out.burst = { messages: r.arrivals.length, perSecond: r.arrivals.length / ((last - first) / 1000), p99: pct(burstDelays, 99) };
  await stop(g.child);
  fs.rmSync(g.dir, { recursive: true, force: true });
  for (const x of [...receivers, r]) x.server.close();
  return out;
}

export function printDeliveries(f) {
  const base = f.signups_0.rps;
  const share = (n) => `${(((base - f[`signups_${n}`].rps) / base) * 100).toFixed(1)} %`;
  console.log('\n## Deliveries (the queue in the store; webhooks to local receivers)\n');
  console.log('| figure | measured | anchor |');
  console.log('|---|---|---|');
  console.log(`| signups/s, bcrypt cost 11, no webhook | ${base.toFixed(1)} | (the anchor) |`);
  console.log(`| signups/s, 1 webhook | ${f.signups_1.rps.toFixed(1)} | cost of the queue write: ${share(1)} of a signup (goal < 10 %) |`);
  console.log(`| signups/s, 3 webhooks | ${f.signups_3.rps.toFixed(1)} | ${share(3)} |`);
  console.log(`| commit → delivery at idle, p50 / p99 | ${f.idle.p50} / ${f.idle.p99} ms (${f.idle.messages} messages) | goal p99 < 1000 ms |`);
  console.log(
    `| delivery throughput in a burst | ${f.burst.perSecond.toFixed(0)} messages/s (${f.burst.messages}; p99 delay ${f.burst.p99} ms) | signups made at the same time |`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  printDeliveries(await deliveryFigures({ duration: arg('duration', 10), connections: arg('connections', 8) }));
}
