// Operating Gatehouse: readiness beside /ping, and /metrics in Prometheus's text format.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { READY_MIN_FREE_BYTES } from '../../src/operator';
import { PASSWORD, startTestServer, tempDir, TEST_STORE, withAdmin } from '../helpers/server';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(line + ' '));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

t.test('/health/ready: 200 while the store answers, 503 when it does not', async (t) => {
  const s = await startTestServer(t);
  const ok = await s.call('GET', '/health/ready');
  t.equal(ok.status, 200);
  t.same(ok.body, { status: 'ready' });
  await s.core.close();
  const down = await s.call('GET', '/health/ready');
  t.equal(down.status, 503);
  t.same(down.body, { status: 'unavailable' });
  t.equal(down.headers.get('retry-after'), '1');
  t.equal((await s.call('GET', '/ping')).status, 200, '/ping does not touch the store');
});

t.test('/health/ready: a SQLite store whose disk is nearly full is not ready', { skip: TEST_STORE === 'postgres' && 'the SQLite store' }, async (t) => {
  // An outside attack filled the disk: ready stayed 200 (a no-op update fits in place) while every
  // sign-in failed. A small disk of its own: a tmpfs mounted for the test.
  const dir = tempDir(t);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dir]);
  t.teardown(() => void execFileSync('umount', ['-l', dir]));
  const s = await startTestServer(t, {}, dir);
  t.equal((await s.call('GET', '/health/ready')).status, 200, 'ready with room');
  const free = () => {
    const d = fs.statfsSync(dir);
    return d.bavail * d.bsize;
  };
  const filler = path.join(dir, 'filler');
  fs.writeFileSync(filler, Buffer.alloc(free() - READY_MIN_FREE_BYTES + 1024 * 1024));
  const full = await s.call('GET', '/health/ready');
  t.equal(full.status, 503, `not ready with ${Math.round(free() / 1024)} KiB free`);
  t.same(full.body, { status: 'unavailable' });
  fs.rmSync(filler);
  t.equal((await s.call('GET', '/health/ready')).status, 200, 'ready again once there is room');
});

t.test('/metrics: administrators, the metrics token, or everyone with --public-metrics', async (t) => {
  const dir = tempDir(t);
  const tokenFile = path.join(dir, 'metrics-token');
  const metricsToken = 'm3trics-t0ken-for-prometheus';
  fs.writeFileSync(tokenFile, metricsToken + '\n', { mode: 0o600 });
  const s = await withAdmin(t, { metricsTokenFile: tokenFile });
  await s.signup('ann@example.com', PASSWORD, s.adminToken);
  const ann = await s.signin('ann@example.com');
  await s.action('user_account', 'signin', { email: 'ann@example.com', password: 'a wrong password here' });

  t.equal((await s.call('GET', '/metrics')).status, 401, 'guests: 401');
  t.equal((await s.call('GET', '/metrics', { token: ann })).status, 403, 'other accounts: 403');
  t.equal((await s.call('GET', '/metrics', { token: metricsToken + 'x' })).status, 401, 'a wrong token: 401');
  const byToken = await s.call('GET', '/metrics', { token: metricsToken });
  t.equal(byToken.status, 200, 'the metrics token');
  const r = await s.call('GET', '/metrics', { token: s.adminToken });
  t.equal(r.status, 200, 'an administrator');
  t.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const m = r.text;
  t.equal(sample(m, 'gatehouse_signins_total{outcome="ok"}'), 2, 'signins ok (admin, ann)');
  t.equal(sample(m, 'gatehouse_signins_total{outcome="failed"}'), 1);
  t.equal(sample(m, 'gatehouse_signups_total'), 2);
  t.equal(sample(m, 'gatehouse_lockouts_total'), 0);
  t.equal(sample(m, 'gatehouse_password_hash_queue_depth'), 0);
  t.ok(sample(m, 'gatehouse_http_requests_total{route="/action/:type/:name",method="POST",status="200"}')! >= 3, 'requests by route pattern');
  t.equal(sample(m, 'gatehouse_http_requests_total{route="/metrics",method="GET",status="401"}'), 2);
  t.ok(sample(m, 'gatehouse_http_request_duration_seconds_count{route="/action/:type/:name",method="POST"}')! >= 4, 'latency histogram');
  t.match(m, /^gatehouse_http_request_duration_seconds_bucket\{le="0\.005",route="\/action\/:type\/:name",method="POST"\} \d+$/m);
  t.match(m, /^gatehouse_store_pool_connections\{state="used"\} \d+$/m, 'the store pool');
  t.ok(sample(m, 'process_resident_memory_bytes')! > 0, 'process memory');
  t.match(m, /^nodejs_eventloop_lag_p99_seconds [\d.e-]+$/m, 'event-loop lag');
  t.notMatch(m, /ann@example\.com|admin@example\.com/, 'no emails');
  t.notMatch(m, /route="\/api\/user_account\/[0-9a-f-]{8}/, 'routes are patterns, never paths with ids');
  await s.call('GET', `/api/user_account/${'1'.repeat(8)}`, { token: s.adminToken });
  t.match((await s.call('GET', '/metrics', { token: s.adminToken })).text, /route="\/api\/:type\/:id"/);

  const open = await startTestServer(t, { publicMetrics: true });
  t.equal((await open.call('GET', '/metrics')).status, 200, '--public-metrics');
});

t.test('--metrics-token-file: unreadable or short tokens stop the start', async (t) => {
  const { loadConfig } = await import('../../src/config');
  const dir = tempDir(t);
  t.throws(() => loadConfig({ metricsTokenFile: path.join(dir, 'missing') }, {}), { code: 'invalid_input', message: /cannot read/ });
  fs.writeFileSync(path.join(dir, 'short'), 'abc');
  t.throws(() => loadConfig({ metricsTokenFile: path.join(dir, 'short') }, {}), { message: /at least 16 characters/ });
  t.throws(() => loadConfig({ logLevel: 'verbose' }, {}), { message: /--log-level must be one of debug, info, warn, error, silent/ });
});

t.test('--log-level warn: no request lines, warnings still', async (t) => {
  const s = await startTestServer(t, { logLevel: 'warn', signinFailuresPerAccount: '1' });
  await s.call('GET', '/ping');
  await s.action('user_account', 'signin', { email: 'zed@example.com', password: 'a wrong password here' });
  await s.core.settle();
  await new Promise((r) => setImmediate(r));
  t.notMatch(s.logs.join(''), /"level":"info"/, 'no info lines (requests, signins)');
  t.match(s.logs.join(''), /"level":"warn","event":"lockout"/, 'the lockout is logged');
});

t.test('/metrics labels each OpenID Connect endpoint by its own route, ids left out', async (t) => {
  const s = await withAdmin(t, { publicMetrics: true });
  await s.call('GET', '/.well-known/openid-configuration');
  await s.call('POST', '/oidc/token', { raw: 'grant_type=authorization_code&code=x', contentType: 'application/x-www-form-urlencoded' });
  await s.call('GET', '/oidc/auth/some-interaction-uid');
  const text = (await s.call('GET', '/metrics')).text;
  t.match(text, /gatehouse_http_requests_total\{route="\/\.well-known\/openid-configuration"/);
  t.match(text, /route="\/oidc\/token"/);
  t.match(text, /route="\/oidc\/auth\/:uid"/);
  t.notMatch(text, /route="\/oidc"[,}]/, 'no longer one label for all of them');
  t.notMatch(text, /some-interaction-uid/, 'no ids in labels');
});
