// Forward authentication's cost (figures, never pass/fail), in one run:
//   GET /auth/request with a valid session, per second at 16 connections, beside the bare
//   baseline server (scripts/baseline-server.mjs: node:http + JWT + one prepared read);
//   nginx in front of a small backend, with and without auth_request to Gatehouse: what a user
//   pays per request for the check.
// Usage: node scripts/forward-bench.mjs [--duration 10 --connections 16]   (npm run bench runs it too)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchServeArgs, freePort, spawnJsonLine, stop } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSWORD = 'benchmark password 1234';

const run = (opts) =>
  new Promise((resolve, reject) =>
    autocannon(opts, (err, r) => (err ? reject(err) : resolve({ rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors }))),
  );

async function json(url, method, body, token) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return res.json();
}

async function waitFor(port) {
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

export async function forwardFigures({ duration = 10, connections = 16 } = {}) {
  const exe = path.join(root, 'dist', 'gatehouse');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fwd-bench-'));
  const dataDir = path.join(dir, 'data');
  const cli = (...args) => execFileSync(exe, ['--data-dir', dataDir, ...args], { encoding: 'utf8' });
  const server = spawnJsonLine(exe, benchServeArgs(dataDir, 4, '--trust-proxy', '127.0.0.1'));
  const children = [server.child];
  const backend = http.createServer((req, res) => res.end('ok\n'));
  try {
    const url = await server.ready;
    const gatePort = new URL(url).port;
    await json(`${url}/action/user_account/signup`, 'POST', {
      attributes: { email: 'a@bench.example', name: 'A', password: PASSWORD, passwordConfirm: PASSWORD },
    });
    const token = (await json(`${url}/action/user_account/signin`, 'POST', { attributes: { email: 'a@bench.example', password: PASSWORD } }))[0].Attributes
      .value;
    cli('app', 'add', '--host', 'app.bench.test');
    const auth = { authorization: `Bearer ${token}` };

    const baseline = spawnJsonLine(
      process.execPath,
      [path.join(root, 'scripts', 'baseline-server.mjs'), path.join(dataDir, 'gatehouse.sqlite')],
      /"url":"([^"]+)"/,
    );
    children.push(baseline.child);
    const baseUrl = await baseline.ready;
    // One uncounted second of the same load first (JIT warm-up), for each server alike.
    await run({ url: `${baseUrl}/`, headers: auth, duration: 1, connections });
    const base = await run({ url: `${baseUrl}/`, headers: auth, duration, connections });
    await stop(baseline.child);
    const checkOpts = {
      url: `${url}/auth/request`,
      headers: { ...auth, 'x-original-url': 'http://app.bench.test/dashboard', 'x-original-method': 'GET' },
      connections,
    };
    await run({ ...checkOpts, duration: 1 });
    const check = await run({ ...checkOpts, duration });

    // nginx in front of the backend, without and with auth_request.
    await new Promise((r) => backend.listen(0, '127.0.0.1', r));
    const backendPort = backend.address().port;
    const [plainPort, guardedPort] = [await freePort(), await freePort()];
    const tmp = (n) => path.join(dir, n);
    fs.writeFileSync(
      tmp('nginx.conf'),
      `user root; daemon off; worker_processes 1; pid ${tmp('nginx.pid')}; error_log ${tmp('error.log')};
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${tmp('b')}; proxy_temp_path ${tmp('p')}; fastcgi_temp_path ${tmp('f')}; uwsgi_temp_path ${tmp('u')}; scgi_temp_path ${tmp('s')};
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 32; }
  upstream gatehouse { server 127.0.0.1:${gatePort}; keepalive 32; }
  server { listen 127.0.0.1:${plainPort}; location / { proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://backend; } }
  server {
    listen 127.0.0.1:${guardedPort};
    location = /gatehouse-auth {
      internal;
      proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_pass http://gatehouse/auth/request;
      proxy_pass_request_body off; proxy_set_header Content-Length "";
      proxy_set_header X-Original-URL $scheme://$http_host$request_uri;
      proxy_set_header X-Original-Method $request_method;
    }
    location / { auth_request /gatehouse-auth; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://backend; }
  }
}
`,
    );
    const nginx = spawn('nginx', ['-p', dir, '-c', tmp('nginx.conf')], { stdio: 'ignore' });
    children.push(nginx);
    await waitFor(plainPort);
    const plain = await run({ url: `http://127.0.0.1:${plainPort}/`, headers: { host: 'app.bench.test' }, duration, connections });
    const guarded = await run({ url: `http://127.0.0.1:${guardedPort}/`, headers: { ...auth, host: 'app.bench.test' }, duration, connections });
    return { base, check, plain, guarded };
  } finally {
    for (const c of children.reverse()) await stop(c).catch(() => undefined);
    backend.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function printForward(f) {
  const line = (name, r, extra = '') =>
    console.log(
      `${name.padEnd(52)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${String(Math.round(r.p99)).padStart(4)} ms${r.non2xx ? `  (${r.non2xx} not 2xx!)` : ''}${extra}`,
    );
  line('baseline: node:http + JWT + 1 prepared read', f.base);
  line('GET /auth/request, valid session', f.check, `  = ${(f.check.rps / f.base.rps).toFixed(2)} of baseline`);
  line('nginx → backend', f.plain);
  const cost = 1e6 / f.guarded.rps - 1e6 / f.plain.rps;
  line(
    'nginx → auth_request → backend',
    f.guarded,
    `  = ${(f.guarded.rps / f.plain.rps).toFixed(2)} of plain nginx; +${cost.toFixed(0)} µs per request at ${16} connections`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  forwardFigures({ duration: arg('duration', 10), connections: arg('connections', 16) })
    .then(printForward)
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
