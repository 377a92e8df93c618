// Regressions found by trying Gatehouse as an operator and a careful tester would (issue 13).
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import t from 'tap';
import { loadConfig } from '../../src/config';
import { openCore } from '../../src/core';
import { createLogger } from '../../src/log';
import { errorCode, setSignup, startTestServer, tempDir, withAdmin } from '../helpers/server';

t.test('--port 0: links, mailed links and the issuer name the bound port, never :0', async (t) => {
  const bound = await startTestServer(t);
  t.notMatch(bound.url, /:0$/);
  // A loopback address is named localhost: browsers accept it as a passkey domain (issue 34).
  const local = bound.url.replace('127.0.0.1', 'localhost');
  t.equal(bound.core.config.publicUrl, local, 'the public URL is the bound port on localhost');
  const s = { ...bound, url: local };
  await s.signup('pat@example.com');
  const token = await s.signin('pat@example.com');
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
  t.equal(claims.iss, s.url, 'the token issuer');
  const me = await s.call('GET', '/api/user_account', { token });
  t.equal(me.status, 200);
  t.ok(me.body.data[0].links.self.startsWith(`${s.url}/api/user_account/`), 'JSON:API links');
  t.ok(me.body.links.self.startsWith(`${s.url}/api/user_account`));
  t.equal((await s.action('user_account', 'request_verification', {}, token)).status, 200);
  await s.core.settle();
  const outbox = path.join(s.dataDir, 'outbox');
  const eml = fs.readFileSync(
    path.join(
      outbox,
      fs.readdirSync(outbox).find((f) => f.endsWith('.eml'))!,
    ),
    'utf8',
  );
  t.match(eml, `${s.url}/verify-email#token=`, 'the mailed link');
  // One unbroken line a person can copy: no quoted-printable soft breaks or =3D.
  t.match(eml, new RegExp(`^ *${s.url.replace(/[.]/g, '\\.')}/verify-email#token=[A-Za-z0-9_-]{20,}$`, 'm'), 'the link is whole');
  t.match(eml, /^Content-Transfer-Encoding: 8bit$/m);
  t.notMatch(eml, ':0/');

  const given = await startTestServer(t, { publicUrl: 'https://id.example.org' });
  t.equal(given.core.config.publicUrl, 'https://id.example.org', 'a given --public-url is kept');
});

t.test('a corrupt compressed body is a 400, never a 500', async (t) => {
  const s = await withAdmin(t);
  const garbage = Buffer.from('this is not compressed at all, not even a little');
  const truncated = zlib.gzipSync(JSON.stringify({ attributes: { email: 'a@b.c', password: 'x' } })).subarray(0, 12);
  const cases = [
    { encoding: 'deflate', body: garbage },
    { encoding: 'gzip', body: garbage },
    { encoding: 'gzip', body: truncated },
    { encoding: 'br', body: garbage },
  ];
  for (const c of cases) {
    for (const [url, type] of [
      ['/action/user_account/signin', 'application/json'],
      ['/api/user_account', 'application/vnd.api+json'],
    ]) {
      const r = await s.call('POST', url, { raw: c.body, token: s.adminToken, headers: { 'content-type': type, 'content-encoding': c.encoding } });
      t.equal(r.status, 400, `${c.encoding} ${url}`);
      t.equal(errorCode(r), 'invalid_input');
    }
  }
  const good = zlib.gzipSync(JSON.stringify({ attributes: { email: 'admin@example.com', password: 'correct horse battery staple' } }));
  const ok = await s.call('POST', '/action/user_account/signin', { raw: good, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
  t.equal(ok.status, 200, 'a well-formed gzip body still works');
  t.notMatch(s.logs.join(''), /internal_error/);
});

t.test('store files are 0600 whatever the folder; an open folder is warned about', async (t) => {
  const dataDir = path.join(tempDir(t), 'data');
  fs.mkdirSync(dataDir, { mode: 0o755 });
  fs.chmodSync(dataDir, 0o755);
  const old = process.umask(0o022);
  t.teardown(() => void process.umask(old));
  const logs: string[] = [];
  // SQLite only: this is about the file on disk.
  const core = await openCore(loadConfig({ dataDir, bcryptCost: 4 }, {}), { logger: createLogger((l) => logs.push(l)) });
  await core.accounts.bootstrapAdmin(core.shell, { email: 'root@example.com', password: 'correct horse battery staple' });
  const file = path.join(dataDir, 'gatehouse.sqlite');
  for (const f of [file, `${file}-wal`, `${file}-shm`]) t.equal(fs.statSync(f).mode & 0o777, 0o600, path.basename(f));
  await core.close();
  await new Promise((r) => setImmediate(r));
  t.match(logs.join(''), /"event":"data_dir_open".*chmod 700/);

  fs.chmodSync(file, 0o644);
  const again = await openCore(loadConfig({ dataDir }, {}), { logger: createLogger(() => {}) });
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'a looser file from before is tightened');
  await again.close();
});

t.test('emails with a trailing dot or an invisible character are refused: no look-alike accounts', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await s.signup('kim@example.com')).status, 200);
  t.equal((await s.signup('\ufeffkim@example.com')).status, 409, 'a leading BOM is trimmed away: the same account, taken');
  for (const email of ['kim@example.com.', 'kim@example..com', 'kim@.example.com', 'k\u200bim@example.com', 'kim@exam\u200dple.com', 'ki\u00adm@example.com']) {
    const r = await s.signup(email);
    t.equal(r.status, 400, JSON.stringify(email));
    t.equal(errorCode(r), 'invalid_input');
  }
});

t.test('passwords are NFC-normalized: an NFD keyboard signs in to an NFC password and back', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const nfc = 'café crème brûlée'.normalize('NFC');
  const nfd = nfc.normalize('NFD');
  t.not(nfc, nfd);
  t.equal((await s.signup('noe@example.com', nfc)).status, 200);
  t.ok(await s.signin('noe@example.com', nfd), 'typed decomposed');
  t.equal((await s.signup('dee@example.com', nfd)).status, 200);
  t.ok(await s.signin('dee@example.com', nfc), 'set decomposed, typed composed');
  const wrong = await s.action('user_account', 'signin', { email: 'dee@example.com', password: 'cafe creme brulee' });
  t.equal(wrong.status, 401, 'the accents still count');
});

t.test('common passwords: a published breach list of 30,000, dressed-up words, keyboard walks', async (t) => {
  const { default: breached } = await import('../../src/accounts/breached-passwords');
  t.ok(breached.split('\n').length >= 10000, 'at least 10,000 entries');
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const refused = [
    '123456789012',
    'qwertyuiopas',
    'gatehouse123',
    'Password2024!',
    'SUPERMAN1',
    'trustno1',
    'aaaaaaaaaaaa',
    'abcabcabcabc',
    'zxcvbnmasdfg',
    '0987654321!!',
  ];
  for (const [i, password] of refused.entries()) {
    const r = await s.signup(`weak${i}@example.com`, password);
    t.equal(errorCode(r), 'password_too_common', password);
  }
  for (const [i, password] of ['correct horse battery staple', 'zebra-kettle-47', 'Tr0ub4dor&3x', 'minnow quartz lantern'].entries()) {
    t.equal((await s.signup(`strong${i}@example.com`, password)).status, 200, password);
  }
});

t.test('pages say the rules as configured and in words, not attribute names', async (t) => {
  const s = await startTestServer(t, { passwordMinLength: '12' });
  const signup = await (await fetch(`${s.url}/signup`)).text();
  t.match(signup, /At least 12 characters/, 'the hint follows --password-min-length');
  t.notMatch(signup, /At least 8 characters/);
  const start = await fetch(`${s.url}/signup`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await start.text())![1];
  const cookie = start.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const r = await fetch(`${s.url}/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({
      csrf,
      name: 'Pat',
      email: 'pat@example.com',
      password: 'a long enough phrase',
      passwordConfirm: 'another long phrase',
    }).toString(),
  });
  const text = await r.text();
  t.match(text, /The two passwords differ/);
  t.notMatch(text, /passwordConfirm differ/, 'no attribute name in the message');
  const expired = await s.call('GET', '/api/me', { token: 'x.y.z' });
  t.match(expired.text, /refresh it/, 'an invalid or expired token says a refresh may work');
});

t.test('a mistyped page address shows a page to a browser, JSON to a program; a favicon exists', async (t) => {
  const s = await startTestServer(t);
  const browser = await fetch(`${s.url}/acount`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  t.equal(browser.status, 404);
  t.match(browser.headers.get('content-type'), /^text\/html/);
  const text = await browser.text();
  t.match(text, /There is no page at this address/);
  t.match(text, /href="\/signin"/, 'with a way on');
  t.match(browser.headers.get('content-security-policy'), /default-src 'self'/);
  const program = await s.call('GET', '/acount');
  t.equal(program.status, 404);
  t.equal(program.body.errors[0].code, 'not_found', 'a program gets the JSON error');
  const api = await fetch(`${s.url}/api/nosuch/x/y`, { headers: { accept: 'text/html' } });
  t.match(api.headers.get('content-type'), /json/, 'API paths answer JSON whatever they accept');
  const icon = await fetch(`${s.url}/favicon.ico`);
  t.equal(icon.status, 200);
  t.match(icon.headers.get('content-type'), /image\/svg\+xml/);
  t.match(await (await fetch(`${s.url}/signin`)).text(), /rel="icon" href="\/assets\/favicon.svg"/);
});
