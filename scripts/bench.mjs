// Benchmarks (figures, never pass/fail): starts the packaged server on a temp store and prints
// signin/s and signup/s beside the bcrypt ceiling, authenticated reads per second with p99, and
// RSS idle and under load. Usage: npm run bench [-- --duration 10 --connections 16]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import * as bcrypt from '@node-rs/bcrypt';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 16);
const COST = arg('cost', 11);
const PASSWORD = 'benchmark password 1234';

function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) * 1024;
}
const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;

/** bcrypt verifications per second at COST with every core busy: the ceiling for signin/s. */
async function bcryptCeiling(seconds = 5) {
  const hash = await bcrypt.hash(PASSWORD, { cost: COST });
  const workers = os.availableParallelism();
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (Date.now() < until) {
        await bcrypt.verify(PASSWORD, hash);
        done++;
      }
    }),
  );
  return done / seconds;
}

async function startServer() {
  const exe = path.join(root, 'dist', 'gatehouse');
  if (!fs.existsSync(exe)) throw new Error('dist/gatehouse is missing: run npm run build first');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  const child = spawn(exe, ['serve', '--port', '0', '--data-dir', dataDir, '--bcrypt-cost', String(COST), '--no-rate-limits'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (chunk) => {
      buf += chunk;
      const m = /"event":"listening","url":"([^"]+)"/.exec(buf);
      if (m) resolve(m[1]);
      // Drop request log lines as they come so the pipe never fills.
      if (buf.length > 1e6) buf = buf.slice(-1000);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  child.stdout.resume();
  return { child, url, dataDir };
}

async function json(url, method, body, token) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': url.includes('/api/') ? 'application/vnd.api+json' : 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

function run(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, connections: CONNECTIONS, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

const summary = (r) => ({
  rps: r.requests.average,
  p50: r.latency.p50,
  p99: r.latency.p99,
  non2xx: r.non2xx,
  errors: r.errors,
});

async function main() {
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${mib(os.totalmem())}; node ${process.version}`);
  console.log(`bcrypt cost ${COST}, ${CONNECTIONS} connections, ${DURATION} s per run`);
  const ceiling = await bcryptCeiling();
  console.log(`bcrypt ceiling: ${ceiling.toFixed(1)} verifications/s with all ${os.availableParallelism()} cores busy`);

  const { child, url, dataDir } = await startServer();
  try {
    await new Promise((r) => setTimeout(r, 500));
    const rssIdle = rssOf(child.pid);
    const admin = { email: 'admin@bench.example', name: 'Admin', password: PASSWORD, passwordConfirm: PASSWORD };
    await json(`${url}/action/user_account/signup`, 'POST', { attributes: admin });
    const signin = await json(`${url}/action/user_account/signin`, 'POST', { attributes: { email: admin.email, password: PASSWORD } });
    const token = signin.body[0].Attributes.value;
    const list = await json(`${url}/api/action?filter=signup`, 'GET', undefined, token);
    const id = list.body.data[0].id;
    await json(`${url}/api/action/${id}`, 'PATCH', { data: { type: 'action', id, attributes: { permission: 2097057 } }, meta: {} }, token);

    let peakRss = rssIdle;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(child.pid))), 200);

    const signins = summary(
      await run({
        url: `${url}/action/user_account/signin`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes: { email: admin.email, password: PASSWORD } }),
      }),
    );
    let n = 0;
    const signups = summary(
      await run({
        url: `${url}/action/user_account/signup`,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (req) => {
              n++;
              const email = `user${n}-${process.pid}@bench.example`;
              return { ...req, body: JSON.stringify({ attributes: { email, name: `User ${n}`, password: PASSWORD, passwordConfirm: PASSWORD } }) };
            },
          },
        ],
      }),
    );
    const reads = summary(
      await run({ url: `${url}/api/action?filter=signup`, headers: { authorization: `Bearer ${token}` } }),
    );
    clearInterval(sampler);

    const row = (name, s, extra = '') =>
      console.log(`${name.padEnd(34)} ${s.rps.toFixed(1).padStart(9)} req/s   p50 ${String(s.p50).padStart(5)} ms   p99 ${String(s.p99).padStart(5)} ms   non-2xx ${s.non2xx}  errors ${s.errors}${extra}`);
    console.log('');
    row('signin (correct password)', signins, `   = ${(signins.rps / ceiling).toFixed(2)} of the bcrypt ceiling`);
    row('signup (new email each)', signups, `   = ${(signups.rps / ceiling).toFixed(2)} of the bcrypt ceiling`);
    row('GET /api/action?filter=signup', reads);
    console.log(`RSS idle ${mib(rssIdle)}, peak under load ${mib(peakRss)}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
