// What sign-in strength and back-channel logout cost: two executables side by side, each on a fresh
// store, every load run on each in alternating turns (figures, never pass/fail):
//   password sign-ins per second through the signin action (bcrypt cost 4 by default, as in
//     scripts/signin-compare.mjs, so the hash does not hide the rest);
//   the OpenID Connect token endpoint: code exchange and rotating refresh (scripts/oidc-load.mjs);
//   authorizations of a signed-in browser: GET /oidc/auth with the page session's and the
//     provider's cookies → a code, then its exchange, per second (what a returning visitor costs);
//   a browser's first authorization: the page session's cookies only, so the provider walks its
//     interaction (a new provider session, the Gatehouse session recorded for the client), then
//     the exchange;
//   sign-outs (the signout action: a session ends, and the clients it signed in to are looked up).
// Each figure is printed for both executables with the ratio after / before, with the CPU the
// server spent per request (main thread + other threads, from /proc).
// Usage: node scripts/strength-bench.mjs --before PATH [--after dist/gatehouse] [--duration 4]
//        [--connections 16] [--turns 4] [--cost 4] [--pg postgres://postgres@127.0.0.1:5432/test]
//   (with --pg, each server gets a fresh database on that server, dropped after)
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchServeArgs, freshPgDatabase, spawnJsonLine, stop } from './process.mjs';
import { authorizationCode, browser, oidcTokenFigures, REDIRECT } from './oidc-load.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const BEFORE = arg('before', null);
const AFTER = arg('after', path.join(root, 'dist', 'gatehouse'));
if (!BEFORE) throw new Error('usage: node scripts/strength-bench.mjs --before PATH [--after PATH]');
const DURATION = Number(arg('duration', 4));
const CONNECTIONS = Number(arg('connections', 16));
const TURNS = Number(arg('turns', 4));
const COST = Number(arg('cost', 4));
const PG = arg('pg', null);
const PASSWORD = 'benchmark password 1234';
const EMAIL = 'strength@bench.example';
const b64url = (b) => b.toString('base64url');
const p99 = (ms) => ms.sort((x, y) => x - y)[Math.floor(ms.length * 0.99)] ?? 0;

/**
 * CPU time (ms) a process has used so far: its main thread, and the rest of the process. The
 * process's own line counts threads that have ended too (a sum over the live threads would lose
 * them, and read less than before).
 */
function cpuOf(pid) {
  const ticks = (file) => {
    const f = fs.readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * (1000 / 100); // utime + stime, in clock ticks of 1/100 s
  };
  const main = ticks(`/proc/${pid}/task/${pid}/stat`);
  return { main, others: ticks(`/proc/${pid}/stat`) - main };
}

/** CPU (µs per request) the server spent since `before`: main thread, other threads. */
const cpuSince = (pid, before, n) => {
  const after = cpuOf(pid);
  return { main: ((after.main - before.main) * 1000) / n, others: ((after.others - before.others) * 1000) / n };
};

/** A fresh store: a temp data directory, and on PostgreSQL a fresh database. */
async function freshStore(n) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-strength-'));
  if (!PG) return { dataDir, args: [], drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  const db = await freshPgDatabase(PG, `gh_strength_${process.pid}_${n}`);
  return {
    dataDir,
    args: ['--db', db.url],
    drop: async () => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    },
  };
}

const signinBody = JSON.stringify({ attributes: { email: EMAIL, password: PASSWORD } });

/** Password sign-ins through the signin action, `connections` at a time. */
async function signins(url, pid, seconds) {
  const cpu0 = cpuOf(pid);
  const r = await autocannon({
    url: `${url}/action/user_account/signin`,
    method: 'POST',
    connections: CONNECTIONS,
    duration: seconds,
    headers: { 'content-type': 'application/json' },
    body: signinBody,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`signin: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return { rps: r.requests.average, n: r.requests.total, p99: r.latency.p99, cpu: cpuSince(pid, cpu0, r.requests.total) };
}

/** A browser signed in on the pages (the Gatehouse session's cookies, no provider session yet). */
async function signedInBrowser(url) {
  const b = browser(url);
  const page = await (await b.request('/signin')).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)[1];
  const res = await b.request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email: EMAIL, password: PASSWORD }).toString(),
  });
  if (res.status !== 303 && res.status !== 302) throw new Error(`page signin: ${res.status}`);
  return b;
}

/**
 * Authorizations, each followed by its code exchange, `connections` browsers at a time for
 * `seconds`. `fresh`: each starts from the page session's cookies alone (a browser's first
 * authorization: the provider's interaction runs); otherwise the provider session is kept (a
 * returning visitor: one GET answers with the code). Counts the redirects each took.
 */
async function authorizations({ url, pid, clientId, clientSecret, browsers, fresh, seconds }) {
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const ms = [];
  const authMs = [];
  let steps = 0;
  const cpu0 = cpuOf(pid);
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    browsers.map(async ({ b, pageCookies }) => {
      while (performance.now() < until) {
        const started = performance.now();
        if (fresh) {
          b.jar.clear();
          for (const [k, v] of pageCookies) b.jar.set(k, v);
        }
        const verifier = b64url(randomBytes(32));
        const params = new URLSearchParams({
          client_id: clientId,
          response_type: 'code',
          redirect_uri: REDIRECT,
          scope: 'openid email profile',
          code_challenge: b64url(createHash('sha256').update(verifier).digest()),
          code_challenge_method: 'S256',
          state: 'bench',
        });
        let location = `/oidc/auth?${params}`;
        let code = null;
        for (let i = 0; i < 10 && !code; i++) {
          const res = await b.request(location);
          await res.arrayBuffer();
          steps++;
          location = res.headers.get('location');
          if (!location) throw new Error(`the authorization stopped at ${res.status}`);
          if (location.startsWith(REDIRECT)) code = new URL(location).searchParams.get('code');
        }
        if (!code) throw new Error('the authorization did not end at the application');
        authMs.push(performance.now() - started);
        const res = await fetch(`${url}/oidc/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }).toString(),
        });
        const json = await res.json();
        if (!res.ok || !json.id_token) throw new Error(`code exchange: ${res.status} ${json.error}`);
        ms.push(performance.now() - started);
      }
    }),
  );
  const n = ms.length;
  return {
    rps: n / ((performance.now() - t0) / 1000),
    n,
    p99: p99(ms),
    authMean: authMs.reduce((a, x) => a + x, 0) / n,
    steps: steps / n,
    cpu: cpuSince(pid, cpu0, n),
  };
}

/** Sign-outs: sessions made by the signin action first (not counted), then each ended by its own token. */
async function signouts(url, pid, seconds) {
  const tokens = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline && tokens.length < 3000) {
        const res = await fetch(`${url}/action/user_account/signin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: signinBody });
        const json = await res.json();
        if (!res.ok) throw new Error(`signin: ${res.status}`);
        tokens.push(json[0].Attributes.value);
      }
    }),
  );
  let next = 0;
  const ms = [];
  const cpu0 = cpuOf(pid);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < tokens.length) {
        const token = tokens[next++];
        const started = performance.now();
        const res = await fetch(`${url}/action/user_account/signout`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ attributes: {} }),
        });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`signout: ${res.status}`);
        ms.push(performance.now() - started);
      }
    }),
  );
  return { rps: tokens.length / ((performance.now() - t0) / 1000), n: tokens.length, p99: p99(ms), cpu: cpuSince(pid, cpu0, tokens.length) };
}

let stores = 0;
/** One executable's server on a fresh store: an account, a client, `connections` signed-in browsers. */
async function start(exe) {
  const store = await freshStore(stores++);
  const server = spawnJsonLine(exe, benchServeArgs(store.dataDir, COST, ...store.args));
  const close = async () => {
    await stop(server.child);
    await store.drop();
  };
  try {
    const url = await server.ready;
    const pid = server.child.pid;
    const res = await fetch(`${url}/action/user_account/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: { email: EMAIL, name: 'Bench', password: PASSWORD, passwordConfirm: PASSWORD } }),
    });
    if (!res.ok) throw new Error(`signup: ${res.status}`);
    const cliArgs = ['--data-dir', store.dataDir, ...store.args];
    // One first-party client; each browser signed in on the pages and through the consent once.
    const client = JSON.parse(
      execFileSync(exe, [...cliArgs, '--json', 'client', 'add', '--name', 'Strength', '--redirect-uri', REDIRECT, '--first-party'], { encoding: 'utf8' }),
    );
    const browsers = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const b = await signedInBrowser(url);
      const pageCookies = new Map(b.jar);
      await authorizationCode(b, client.client_id);
      browsers.push({ b, pageCookies });
    }
    return {
      close,
      tokens: { exe, cliArgs, env: process.env, url, email: EMAIL, password: PASSWORD, connections: CONNECTIONS, pid },
      auth: { url, pid, clientId: client.client_id, clientSecret: client.client_secret, browsers },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The loads, each measured on a server for `seconds`: one figure, or (the token endpoint) two. */
const LOADS = {
  signin: async (s, seconds) => ({ signin: await signins(s.tokens.url, s.tokens.pid, seconds) }),
  tokens: async (s, seconds) => {
    const r = await oidcTokenFigures({ ...s.tokens, seconds });
    return { exchange: r.exchange, refresh: r.refresh };
  },
  returning: async (s, seconds) => ({ returning: await authorizations({ ...s.auth, fresh: false, seconds }) }),
  first: async (s, seconds) => ({ first: await authorizations({ ...s.auth, fresh: true, seconds }) }),
  signout: async (s, seconds) => ({ signout: await signouts(s.tokens.url, s.tokens.pid, Math.min(seconds, 3)) }),
};
const FIGURES = [
  ['signin action (password)', 'signin'],
  ['OIDC code exchange', 'exchange'],
  ['OIDC refresh (rotating)', 'refresh'],
  ['authorize + exchange, signed-in browser', 'returning'],
  ["authorize + exchange, browser's first", 'first'],
  ['signout action', 'signout'],
];

/** The slices of one figure together: requests over time, CPU per request weighted by requests, the median p99. */
function total(slices) {
  const n = slices.reduce((a, r) => a + (r.n ?? 0), 0);
  const seconds = slices.reduce((a, r) => a + r.n / r.rps, 0);
  const cpu = (k) => slices.reduce((a, r) => a + r.cpu[k] * r.n, 0) / n;
  const p99s = slices.map((r) => r.p99).sort((x, y) => x - y);
  const steps = slices.reduce((a, r) => a + (r.steps ?? 0) * r.n, 0) / n;
  const authMean = slices.reduce((a, r) => a + (r.authMean ?? 0) * r.n, 0) / n;
  // A slice whose other threads read less than nothing lost an ended thread's time: that share is not known.
  const others = slices.some((r) => r.cpu.others < 0) ? -1 : cpu('others');
  return { rps: n / seconds, n, p99: p99s[Math.floor(p99s.length / 2)], cpu: { main: cpu('main'), others }, steps, authMean };
}

console.log(`before: ${BEFORE}\nafter:  ${AFTER}`);
console.log(
  `${os.cpus().length} cores; ${PG ? 'PostgreSQL' : 'SQLite'}; bcrypt cost ${COST}, ${CONNECTIONS} connections, ${DURATION} s per load, ${TURNS} turns each (before and after alternate: ABBA)\n`,
);
// Both servers run side by side and every load alternates between them in short turns, so a
// change in the machine's speed (it is shared) weighs on both alike.
const servers = {};
try {
  servers.before = await start(path.resolve(BEFORE));
  servers.after = await start(path.resolve(AFTER));
  const slices = { before: {}, after: {} };
  for (const [name, load] of Object.entries(LOADS)) {
    for (const which of ['before', 'after']) await load(servers[which], 1); // warm-up (JIT), not counted
    for (let t = 0; t < TURNS; t++) {
      const order = t % 4 === 0 || t % 4 === 3 ? ['before', 'after'] : ['after', 'before'];
      for (const which of order) {
        for (const [key, r] of Object.entries(await load(servers[which], DURATION))) (slices[which][key] ??= []).push(r);
      }
    }
    process.stderr.write(`${name} measured\n`);
  }
  // oidc-load.mjs's CPU figures (the token endpoint) sum the live threads: a thread that ended
  // during the load takes its time with it, so its share of the other threads is not known then.
  const cpuText = (r) => `${r.cpu.main.toFixed(0)} + ${r.cpu.others >= 0 ? r.cpu.others.toFixed(0) : '?'} µs`;
  const extra = (r) => (r.steps ? `, ${r.steps.toFixed(1)} requests and ${r.authMean.toFixed(0)} ms to the code` : '');
  const cpuSum = (r) => r.cpu.main + r.cpu.others;
  console.log('each figure over its turns: requests/s (median p99; CPU per request: main thread + other threads)');
  for (const [name, key] of FIGURES) {
    const b = total(slices.before[key]);
    const a = total(slices.after[key]);
    const turns = slices.before[key].map((r, i) => (slices.after[key][i].rps / r.rps).toFixed(2)).join(', ');
    console.log(`  ${name}`);
    console.log(`    before ${b.rps.toFixed(0).padStart(5)}/s (p99 ${b.p99.toFixed(0)} ms; CPU ${cpuText(b)}${extra(b)})`);
    console.log(`    after  ${a.rps.toFixed(0).padStart(5)}/s (p99 ${a.p99.toFixed(0)} ms; CPU ${cpuText(a)}${extra(a)})`);
    const cpuRatio = a.cpu.others >= 0 && b.cpu.others >= 0 ? (cpuSum(a) / cpuSum(b)).toFixed(2) : `main thread ${(a.cpu.main / b.cpu.main).toFixed(2)}`;
    console.log(`    after / before: ${(a.rps / b.rps).toFixed(2)} (turns ${turns}); CPU per request ${cpuRatio}`);
  }
} finally {
  for (const s of Object.values(servers)) await s.close();
}
