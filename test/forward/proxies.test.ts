// Forward authentication through the real proxies (Debian's nginx and Caddy), running the
// configuration blocks docs/forward-auth.md shows, in front of a backend that echoes what it got.
// Chromium (its resolver mapping *.gh.test to 127.0.0.1) opens an app, signs in, comes back, and
// opens the other app without signing in again: one cookie on the parent domain.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { freePort, launch, screenshots } from '../helpers/browser';
import { docBlock, startCaddy, startCaddyFile, startEcho, startNginx, startNginxFile } from '../helpers/proxies';
import { manualClock, totpAt, type ManualClock } from '../helpers/clock';
import { PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';

async function setUp(t: Parameters<typeof startTestServer>[0], clock?: ManualClock) {
  const [gatePort, nginxPort, caddyPort] = [await freePort(), await freePort(), await freePort()];
  const s = await startTestServer(
    t,
    { port: gatePort, publicUrl: `http://auth.gh.test:${gatePort}`, cookieDomain: 'gh.test', trustProxy: '127.0.0.1' },
    undefined,
    { clock },
  );
  const backend = await startEcho(t);
  // The documented blocks, with this run's names and ports.
  const nginx = docBlock('nginx')
    .replace('listen 80;', `listen 127.0.0.1:${nginxPort};`)
    .replace('grafana.example.com', 'grafana.gh.test')
    .replaceAll('127.0.0.1:6336', `127.0.0.1:${gatePort}`)
    .replace('127.0.0.1:3000', `127.0.0.1:${backend}`);
  const caddy = docBlock('caddy')
    .replace('files.example.com {', `http://files.gh.test:${caddyPort} {`)
    .replace('127.0.0.1:6336', `127.0.0.1:${gatePort}`)
    .replace('127.0.0.1:3000', `127.0.0.1:${backend}`);
  await startNginx(t, nginx, nginxPort);
  await startCaddy(t, caddy, caddyPort);

  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  await s.signup('alex@example.com');
  await s.signup('sam@example.com');
  await cli(s.dataDir, ['group', 'create', 'family']);
  await cli(s.dataDir, ['group', 'add', 'family', 'alex@example.com']);
  await cli(s.dataDir, ['app', 'add', '--host', 'grafana.gh.test', '--allow-group', 'family']);
  await cli(s.dataDir, ['app', 'add', '--host', 'files.gh.test', '--bypass-path', '/share']);
  const grafana = `http://grafana.gh.test:${nginxPort}`;
  const files = `http://files.gh.test:${caddyPort}`;
  return { s, grafana, files, gatePort };
}

const browserArgs = ['--host-resolver-rules=MAP *.gh.test 127.0.0.1'];

t.test('nginx and Caddy: sign in once, come back, open the other app; the backend sees Remote-*', async (t) => {
  const { grafana, files, gatePort } = await setUp(t);
  const browser = await launch(t, browserArgs);
  const page = await browser.newPage();
  // The apps' own cookies pass through; Gatehouse's session cookie does not (issue 46, item 15).
  await page.context().addCookies([
    { name: 'theme', value: 'dark', domain: 'grafana.gh.test', path: '/' },
    { name: 'theme', value: 'light', domain: 'files.gh.test', path: '/' },
  ]);

  await page.goto(`${grafana}/d/1?from=now-6h&to=now`);
  t.equal(new URL(page.url()).host, `auth.gh.test:${gatePort}`, 'nginx sent the browser to sign in');
  t.equal(new URL(page.url()).searchParams.get('rd'), `${grafana}/d/1?from=now-6h&to=now`, 'with the whole address to come back to');
  await screenshots(page, 'forward-signin');
  await page.fill('input[name=email]', 'alex@example.com');
  await page.fill('input[name=password]', PASSWORD);
  await Promise.all([page.waitForURL(`${grafana}/**`), page.click('button[type=submit]')]);
  const seen = JSON.parse((await page.textContent('body')) ?? '{}');
  t.equal(seen.url, '/d/1?from=now-6h&to=now', 'back at the app, the query kept');
  t.equal(seen.headers['remote-email'], 'alex@example.com');
  t.equal(seen.headers['remote-name'], 'alex');
  t.equal(seen.headers['remote-groups'], 'family,users');
  t.match(seen.headers['remote-user'], /^[0-9a-f-]{36}$/);
  t.match(seen.headers.cookie, /(^|; )theme=dark($|;)/, "nginx: the app's own cookie passes");
  t.notMatch(seen.headers.cookie, /gatehouse/, "nginx: Gatehouse's session cookie does not reach the app");

  // Single sign-on: the cookie on gh.test opens the app behind Caddy too.
  await page.goto(`${files}/docs/a.txt`);
  const viaCaddy = JSON.parse((await page.textContent('body')) ?? '{}');
  t.equal(viaCaddy.url, '/docs/a.txt', 'Caddy let the same session through');
  t.equal(viaCaddy.headers['remote-email'], 'alex@example.com');
  t.equal(viaCaddy.headers['remote-user'], seen.headers['remote-user']);
  t.match(viaCaddy.headers.cookie, /(^|; )theme=light($|;)/, "Caddy: the app's own cookie passes");
  t.notMatch(viaCaddy.headers.cookie, /gatehouse/, "Caddy: Gatehouse's session cookie does not reach the app");

  // Headers the browser sends itself never reach the app as its own.
  const spoof = (await page.evaluate(async () =>
    (await fetch('/docs/b', { headers: { 'Remote-User': 'admin', 'Remote-Groups': 'administrators' } })).json(),
  )) as { headers: Record<string, string> };
  t.equal(spoof.headers['remote-groups'], 'family,users', 'Caddy replaced the spoofed Remote-Groups');
  t.equal(spoof.headers['remote-user'], seen.headers['remote-user']);

  // Sign out on Gatehouse: both apps ask for sign-in again at once.
  await page.goto(`http://auth.gh.test:${gatePort}/account`);
  await Promise.all([page.waitForURL(/\/signin/), page.click('form[action="/signout"] button')]);
  await page.goto(`${grafana}/d/1`);
  t.match(page.url(), /\/signin\?rd=/, 'nginx: signed out');
  const xhr = await page
    .evaluate(async (url) => (await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' })).status, `${files}/x`)
    .catch(() => 0);
  void xhr;
  await page.goto(`${files}/docs/a.txt`);
  t.match(page.url(), /\/signin\?rd=/, 'Caddy: signed out');
  await page.goto(`${files}/share/link`);
  t.equal(JSON.parse((await page.textContent('body')) ?? '{}').url, '/share/link', 'a bypass path opens without signing in');
});

t.test('nginx and Caddy: an outsider gets 403; XHRs get 401; an unknown host is refused', async (t) => {
  const { grafana, files, s } = await setUp(t);
  const sam = await s.signin('sam@example.com');
  // Node's fetch cannot set Host: ask 127.0.0.1 with the Host header a browser would send.
  const get = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const u = new URL(url);
      http
        .get({ host: '127.0.0.1', port: u.port, path: u.pathname + u.search, headers: { host: u.host, ...headers } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        })
        .on('error', reject);
    });
  const asSam = { authorization: `Bearer ${sam}`, accept: 'text/html' };
  const outsider = await get(`${grafana}/`, asSam);
  t.equal(outsider.status, 403, 'nginx: not in family');
  // Issue 34, item 7: the person reads why, not nginx's bare "403 Forbidden"; the log says it too.
  t.match(
    outsider.body,
    /^Your account is not in a group this app allows\.\n\nSigned in with the wrong account\? Sign out at http:\/\/auth\.gh\.test:\d+\/account/,
  );
  t.notMatch(outsider.body, /nginx/);
  t.ok(
    s.logs.some((l) => /"path":"\/auth\/request","status":403,"reason":"not_in_group"/.test(l)),
    "Gatehouse's log line names the reason",
  );
  t.equal((await get(`${files}/`, asSam)).status, 200, 'Caddy: any account');
  const xhrNginx = await get(`${grafana}/api`, { accept: 'application/json' });
  t.equal(xhrNginx.status, 401, 'nginx: an XHR keeps its 401 (the block redirects browsers only)');
  const browserNginx = await get(`${grafana}/x`, { accept: 'text/html' });
  t.equal(browserNginx.status, 302, 'nginx: a browser is sent to sign in');
  t.match(browserNginx.headers.location, /\/signin\?rd=http%3A%2F%2Fgrafana\.gh\.test/);
  const xhrCaddy = await get(`${files}/api`, { accept: 'application/json' });
  t.equal(xhrCaddy.status, 401, 'Caddy: an XHR gets 401, not a redirect');
  const browserCaddy = await get(`${files}/x`, { accept: 'text/html' });
  t.equal(browserCaddy.status, 302);
  t.match(browserCaddy.headers.location, /\/signin\?rd=http%3A%2F%2Ffiles\.gh\.test/);
  await cli(s.dataDir, ['app', 'remove', 'files.gh.test']);
  t.equal((await get(`${files}/`, asSam)).status, 403, 'Caddy: the app was removed while the servers ran');
  await cli(s.dataDir, ['app', 'remove', 'grafana.gh.test']);
  const gone = await get(`${grafana}/`, asSam);
  t.equal(gone.status, 403, 'nginx: no app for the host');
  t.match(gone.body, /^No app covers this address\./);
});

t.test('Caddy: the two-factor step keeps the way back', async (t) => {
  const clock = manualClock();
  const { s, files } = await setUp(t, clock);
  const sam = await s.signin('sam@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, sam);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, sam)).status, 200);

  const browser = await launch(t, browserArgs);
  const page = await browser.newPage();
  await page.goto(`${files}/docs/report.pdf`);
  t.match(page.url(), /\/signin\?rd=/);
  await page.fill('input[name=email]', 'sam@example.com');
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('input[name=otp]');
  await screenshots(page, 'forward-totp-step');
  t.equal(await page.locator('input[name=password]').count(), 0, 'the code step asks for the code alone');
  // The next step's code: the one that turned TOTP on may not be used twice.
  clock.advance(30_000);
  await page.fill('input[name=otp]', await totpAt(secret, clock));
  await Promise.all([page.waitForURL(`${files}/**`), page.click('button[type=submit]')]);
  const seen = JSON.parse((await page.textContent('body')) ?? '{}');
  t.equal(seen.url, '/docs/report.pdf', 'back at the app after the code');
  t.equal(seen.headers['remote-email'], 'sam@example.com');
});

t.test('issue 34, item 6: the one-machine recipe works as written (*.localhost, whole nginx.conf and Caddyfile)', async (t) => {
  const [gatePort, nginxPort, caddyPort, backend] = [await freePort(), await freePort(), await freePort(), await startEcho(t)];
  const shell = docBlock('local-shell')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, ''));
  // The recipe's serve line, with this run's port (the test's server is the in-process one).
  const serveLine = shell.find((l) => l.startsWith('gatehouse serve '))!;
  t.equal(serveLine, 'gatehouse serve --public-url http://auth.app.localhost:6336 --cookie-domain app.localhost --trust-proxy 127.0.0.1');
  const s = await startTestServer(t, {
    port: gatePort,
    publicUrl: `http://auth.app.localhost:${gatePort}`,
    cookieDomain: 'app.localhost',
    trustProxy: '127.0.0.1',
  });
  // The recipe's admin commands, run as written.
  for (const line of shell) {
    const piped = /^printf '([^']*)' \| gatehouse (.*)$/.exec(line);
    const plain = /^gatehouse (?!serve )(.*)$/.exec(line);
    const args = (piped?.[2] ?? plain?.[1])?.split(/\s+/);
    if (!args) continue;
    const r = await cli(s.dataDir, args, { stdin: piped?.[1] });
    t.equal(r.code, 0, `${line}: ${r.err}`);
  }
  const ports = (file: string) =>
    file
      .replaceAll('127.0.0.1:6336', `127.0.0.1:${gatePort}`)
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${backend}`)
      .replace('127.0.0.1:8080', `127.0.0.1:${nginxPort}`)
      .replace('files.app.localhost:8081', `files.app.localhost:${caddyPort}`);
  await startNginxFile(t, ports(docBlock('nginx-local')), nginxPort);
  await startCaddyFile(t, ports(docBlock('caddy-local')), caddyPort);

  // No resolver rules: Chromium sends *.localhost to this machine by itself.
  const browser = await launch(t);
  for (const [proxy, port] of [
    ['nginx', nginxPort],
    ['Caddy', caddyPort],
  ] as const) {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`http://files.app.localhost:${port}/hello?x=1`);
    t.equal(new URL(page.url()).host, `auth.app.localhost:${gatePort}`, `${proxy}: sent to sign in`);
    await page.fill('input[name=email]', 'admin@example.com');
    await page.fill('input[name=password]', 'a long admin password');
    await Promise.all([page.waitForURL(`http://files.app.localhost:${port}/**`), page.click('button[type=submit]')]);
    const seen = JSON.parse((await page.textContent('body')) ?? '{}');
    t.equal(seen.url, '/hello?x=1', `${proxy}: back at the app`);
    t.equal(seen.headers['remote-email'], 'admin@example.com', `${proxy}: the app knows who it is`);
  }
});

/** Python's http.server: an app that decodes %XX, merges // and resolves .. as most file servers do. */
async function startFileServer(t: Parameters<typeof startTestServer>[0]): Promise<number> {
  const dir = tempDir(t, 'gh-files-');
  fs.mkdirSync(path.join(dir, 'admin'));
  fs.mkdirSync(path.join(dir, 'public'));
  fs.writeFileSync(path.join(dir, 'admin', 'secret.txt'), 'THE SECRET\n');
  fs.writeFileSync(path.join(dir, 'public', 'hello.txt'), 'hello\n');
  const port = await freePort();
  const child = spawn('/usr/bin/python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dir], { stdio: 'ignore' });
  t.teardown(() => void child.kill());
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/public/hello.txt`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return port;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('python3 -m http.server did not start');
}

/** A raw GET through a proxy: the path goes on the wire exactly as written. */
const rawGet = (port: number, host: string, rawPath: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: rawPath, headers: { host, accept: 'text/html', ...headers } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });

t.test('issue 46, items 1-3: through nginx and Caddy to an app that decodes, no spelling of a guarded path gets past its rule', async (t) => {
  const [gatePort, nginxPort, caddyPort] = [await freePort(), await freePort(), await freePort()];
  const s = await startTestServer(t, { port: gatePort, publicUrl: `http://auth.gh.test:${gatePort}`, cookieDomain: 'gh.test', trustProxy: '127.0.0.1' });
  const files = await startFileServer(t);
  await startNginx(
    t,
    docBlock('nginx')
      .replace('listen 80;', `listen 127.0.0.1:${nginxPort};`)
      .replace('grafana.example.com', 'grafana.gh.test')
      .replaceAll('127.0.0.1:6336', `127.0.0.1:${gatePort}`)
      .replace('127.0.0.1:3000', `127.0.0.1:${files}`),
    nginxPort,
  );
  await startCaddy(
    t,
    docBlock('caddy')
      .replace('files.example.com {', `http://files.gh.test:${caddyPort} {`)
      .replace('127.0.0.1:6336', `127.0.0.1:${gatePort}`)
      .replace('127.0.0.1:3000', `127.0.0.1:${files}`),
    caddyPort,
  );
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  await s.signup('sam@example.com');
  const sam = await s.signin('sam@example.com');
  for (const host of ['grafana.gh.test', 'files.gh.test']) {
    await cli(s.dataDir, ['app', 'add', '--host', host, '--bypass-path', '/public']);
    await cli(s.dataDir, ['app', 'add', '--host', host, '--path', '/admin', '--allow-group', 'administrators']);
  }
  const proxies = [
    ['nginx', nginxPort, 'grafana.gh.test'],
    ['Caddy', caddyPort, 'files.gh.test'],
  ] as const;
  // The spellings of /admin/secret.txt, each read by Python as that file.
  const spellings = [
    '/%61dmin/secret.txt',
    '//admin/secret.txt',
    '/x/..%2fadmin/secret.txt',
    '/admin%2fsecret.txt',
    '/%41dmin/secret.txt',
    '/admin;/secret.txt',
    '/admin./secret.txt',
    '/Admin/secret.txt',
  ];
  const bypassing = ['/public/..%2fadmin/secret.txt', '/public/%2e%2e%2fadmin/secret.txt', '/public/..%5cadmin/secret.txt', '/public/..%252fadmin/secret.txt'];
  for (const [proxy, port, host] of proxies) {
    const asAdmin = await rawGet(port, host, '/%61dmin/secret.txt', { authorization: `Bearer ${admin}` });
    t.equal(asAdmin.body, 'THE SECRET\n', `${proxy}: the app decodes (an administrator reads /%61dmin/secret.txt)`);
    t.equal((await rawGet(port, host, '/public/hello.txt')).body, 'hello\n', `${proxy}: the bypass still opens without a session`);
    t.equal((await rawGet(port, host, '/admin/secret.txt', { authorization: `Bearer ${sam}` })).status, 403, `${proxy}: the plain path is refused`);
    for (const p of spellings) {
      const r = await rawGet(port, host, p, { authorization: `Bearer ${sam}` });
      t.not(r.status, 200, `${proxy}: ${p} as a non-administrator (${r.status})`);
      t.notMatch(r.body, /THE SECRET/);
    }
    for (const p of bypassing) {
      const r = await rawGet(port, host, p);
      t.not(r.status, 200, `${proxy}: ${p} with no session (${r.status})`);
      t.notMatch(r.body, /THE SECRET/);
      t.match(r.body, /^(Refused: )?this address can be read in more than one way|^refused: /i, `${proxy}: the person reads why`);
    }
  }
});
