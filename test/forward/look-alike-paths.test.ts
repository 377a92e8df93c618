// Issue 57, item 9 (forward authentication): overlong UTF-8 dots (`%c0%ae`) and the fullwidth
// solidus (`%ef%bc%8f`) passed as ordinary path characters, so `/public/%c0%ae%c0%ae/admin/…`
// fell under a bypass rule although an app that decodes leniently reads it as `/admin/…`.
// Bytes that are not UTF-8 and the look-alikes of `/`, `\` and `.` are now refused as bad_path,
// as an encoded `/` is; real non-ASCII characters still pass, one spelling for raw and encoded.
import t, { type Test } from 'tap';
import { normalPath } from '../../src/apps/rules';
import { cli } from '../helpers/cli';
import { setSignup, startTestServer, type TestServer } from '../helpers/server';

/** [path, what it is]: each refused. */
const REFUSED: Array<[string, string]> = [
  // not UTF-8
  ['/a/%c0%ae%c0%ae/b', 'overlong . (2 bytes)'],
  ['/a/%C0%AE./b', 'overlong . beside a real one'],
  ['/a%c0%afb', 'overlong / (2 bytes)'],
  ['/a%c1%9cb', 'overlong \\ (2 bytes)'],
  ['/a/%e0%80%ae%e0%80%ae/b', 'overlong . (3 bytes)'],
  ['/a%e0%80%afb', 'overlong / (3 bytes)'],
  ['/a/%f0%80%80%ae/b', 'overlong . (4 bytes)'],
  ['/a%f8%80%80%80%afb', 'a 5-byte form'],
  ['/a%fc%80%80%80%80%afb', 'a 6-byte form'],
  ['/a%c0%80b', 'overlong NUL'],
  ['/a%ed%a0%80b', 'a UTF-16 surrogate'],
  ['/a%f4%90%80%80b', 'beyond U+10FFFF'],
  ['/a%80b', 'a lone continuation byte'],
  ['/a%c3', 'a truncated sequence at the end'],
  ['/a%c3/b', 'a truncated sequence before /'],
  ['/a%e9b', 'Latin-1 é, not UTF-8'],
  ['/caf\u00e9', 'a raw Latin-1 é in the header'],
  ['/a%ffb', 'a byte UTF-8 never holds'],
  ['/a/\u00c0\u00ae\u00c0\u00ae/b', 'overlong . as raw bytes in the header'],
  ['/a\ud800b', 'a lone surrogate (a string, not a header)'],
  // look-alikes of /
  ['/a%ef%bc%8fb', 'U+FF0F fullwidth solidus'],
  ['/a%EF%BC%8F..%EF%BC%8Fb', 'fullwidth solidus climbing'],
  ['/a%e2%88%95b', 'U+2215 division slash'],
  ['/a%e2%81%84b', 'U+2044 fraction slash'],
  ['/a%e2%a7%b8b', 'U+29F8 big solidus'],
  ['/a%e2%95%b1b', 'U+2571 box drawings diagonal'],
  ['/a\uff0fb', 'U+FF0F as a character'],
  ['/a\u00ef\u00bc\u008fb', 'U+FF0F as raw bytes in the header'],
  // look-alikes of \
  ['/a%ef%bc%bcb', 'U+FF3C fullwidth reverse solidus'],
  ['/a%ef%b9%a8b', 'U+FE68 small reverse solidus'],
  ['/a%e2%88%96b', 'U+2216 set minus'],
  ['/a%e2%a7%b5b', 'U+29F5 reverse solidus operator'],
  ['/a%c2%a5..%c2%a5b', 'U+00A5 yen sign (\\ in Japanese Windows)'],
  ['/a%e2%82%a9b', 'U+20A9 won sign (\\ in Korean Windows)'],
  // look-alikes of .
  ['/a/%ef%bc%8e%ef%bc%8e/b', 'U+FF0E fullwidth full stop'],
  ['/a/%e2%80%a4%e2%80%a4/b', 'U+2024 one dot leader'],
  ['/a/%e2%80%a5/b', 'U+2025 two dot leader'],
  ['/a/%e2%80%a6/b', 'U+2026 horizontal ellipsis'],
  ['/a/%ef%b9%92/b', 'U+FE52 small full stop'],
  ['/a/%e3%80%82%e3%80%82/b', 'U+3002 ideographic full stop'],
  ['/a/%ef%bd%a1/b', 'U+FF61 halfwidth ideographic full stop'],
  ['/a/%e2%92%88/b', 'U+2488 digit one full stop (NFKC "1.")'],
  // look-alikes of % and ; (an app that normalizes to NFKC decodes again, or drops a parameter)
  ['/a%ef%bc%852fb', 'U+FF05 fullwidth percent sign'],
  ['/a%ef%b9%aa2fb', 'U+FE6A small percent sign'],
  ['/a%ef%bc%9bx', 'U+FF1B fullwidth semicolon'],
  ['/a%cd%bex', 'U+037E Greek question mark (NFKC ";")'],
];

/** [path, its normal form]: characters that are only themselves pass, one spelling for raw and encoded. */
const PASSED: Array<[string, string]> = [
  ['/caf%c3%a9', '/caf%C3%A9'],
  ['/caf%C3%A9', '/caf%C3%A9'],
  ['/caf\u00c3\u00a9', '/caf%C3%A9'],
  ['/%e4%b8%ad%e6%96%87/x', '/%E4%B8%AD%E6%96%87/x'],
  ['/%e3%83%8e%e3%83%bc%e3%83%88', '/%E3%83%8E%E3%83%BC%E3%83%88'],
  ['/%f0%9f%98%80', '/%F0%9F%98%80'],
  ['/\u{1F600}', '/%F0%9F%98%80'],
  ['/a/%c2%b7/b', '/a/%C2%B7/b'],
  ['/%ef%bb%bfx', '/%EF%BB%BFx'],
  ['/%f4%8f%bf%bf', '/%F4%8F%BF%BF'],
];

t.test('normalPath refuses bytes that are not UTF-8 and the look-alikes of /, \\ and .', async (t) => {
  for (const [raw, what] of REFUSED) {
    const r = normalPath(raw);
    t.ok('problem' in r, `${what}: ${JSON.stringify(raw)} refused`);
    if ('problem' in r) t.match(r.problem, /not UTF-8|look-alike/, what);
  }
});

t.test('normalPath keeps real characters, raw or encoded, in one percent-encoded spelling', async (t) => {
  for (const [raw, want] of PASSED) t.same(normalPath(raw), { path: want }, JSON.stringify(raw));
});

const APP = 'app.gh.test';

const forward = (s: TestServer, uri: string, token?: string) =>
  s.call('GET', '/auth/forward', {
    token,
    redirect: 'manual',
    headers: { 'x-forwarded-proto': 'http', 'x-forwarded-host': APP, 'x-forwarded-uri': uri, 'x-forwarded-method': 'GET', accept: 'application/json' },
  });
const original = (s: TestServer, url: string, token?: string) =>
  s.call('GET', '/auth/request', { token, headers: { 'x-original-url': url, 'x-original-method': 'GET', accept: 'application/json' } });

/** A server with an app: /public open to guests, /admin for the family group; and a signed-in outsider. */
async function guardedApp(t: Test) {
  const s = await startTestServer(t, { trustProxy: '127.0.0.1', publicUrl: 'http://auth.gh.test:6336', cookieDomain: 'gh.test' });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('outsider@example.com');
  const outsider = await s.signin('outsider@example.com');
  await cli(s.dataDir, ['group', 'create', 'family']);
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', APP, '--bypass-path', '/public'])).code, 0);
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', APP, '--path', '/admin', '--allow-group', 'family'])).code, 0);
  return { s, outsider };
}

t.test('issue 57, item 9: look-alike paths are refused as bad_path at /auth/forward and /auth/request', async (t) => {
  const { s, outsider } = await guardedApp(t);
  // Each was 200 with no session: under /public, while a lenient app reads /admin/secret.txt.
  const tricks = [
    '/public/%c0%ae%c0%ae/admin/secret.txt',
    '/public/%e0%80%ae%e0%80%ae/admin/secret.txt',
    '/public/..%c0%afadmin/secret.txt',
    '/public%ef%bc%8f..%ef%bc%8fadmin/secret.txt',
    '/public/%ef%bc%8e%ef%bc%8e/admin/secret.txt',
    '/public/%e2%80%a5/admin/secret.txt',
    '/public/..%ef%bc%bcadmin/secret.txt',
    '/public/..%e2%88%95admin/secret.txt',
    '/public/..%e2%81%84admin/secret.txt',
    '/public/%e2%80%a4%e2%80%a4/admin/secret.txt',
    '/public/..%c2%a5admin/secret.txt',
    '/public/\u00c0\u00ae\u00c0\u00ae/admin/secret.txt',
  ];
  for (const uri of tricks) {
    for (const token of [undefined, outsider]) {
      const r = await forward(s, uri, token);
      t.equal(r.status, 400, `${uri}: refused (${token ? 'signed in' : 'no session'})`);
      t.equal(r.headers.get('x-gatehouse-reason'), 'bad_path');
      t.match(r.text, /^refused: the path has (bytes that are not UTF-8|U\+[0-9A-F]{4,5}, a look-alike)/);
    }
    const nginx = await original(s, `http://${APP}${uri}?q=1`);
    t.equal(nginx.status, 403, `${uri} in X-Original-URL: refused (403 for nginx)`);
    t.equal(nginx.headers.get('x-gatehouse-reason'), 'bad_path');
  }
  t.equal((await forward(s, '/public/caf%c3%a9.txt')).status, 200, 'a real character passes');
  t.equal((await forward(s, '/public/caf\u00c3\u00a9.txt')).status, 200, 'and raw, as UTF-8 bytes');
  t.equal((await forward(s, '/admin/%e4%b8%ad.txt', outsider)).status, 403, 'the /admin rule still applies under it');
});

// Found by the outsider review: spellings a Unicode-folding app or a Windows file system reads as a
// guarded path passed as ordinary paths (200 for a non-member on /admin, and for a guest through a
// /public bypass to a guarded /public/secret).
t.test('letters that fold, invisible characters, NTFS streams and short names are bad_path beside a rule', async (t) => {
  const { s, outsider } = await guardedApp(t);
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', APP, '--path', '/public/secret', '--allow-group', 'family'])).code, 0);
  for (const [uri, token] of [
    ['/adm%c4%b1n', outsider],
    ['/%e2%80%8cadmin', outsider],
    ['/admin::$DATA', outsider],
    ['/ADMIN~1', outsider],
    ['/%ef%bd%81dmin', outsider],
    ['/public/%c5%bfecret/x', undefined],
    ['/public/secret%e2%80%8c', undefined],
    ['/public/%ef%bb%bfsecret', undefined],
    ['/public/secret::$DATA', undefined],
    ['/public/SECRE~1', undefined],
  ] as Array<[string, string | undefined]>) {
    const r = await forward(s, uri, token);
    t.equal(r.status, 400, `${uri}: refused`);
    t.equal(r.headers.get('x-gatehouse-reason'), 'bad_path');
    t.equal((await original(s, `http://${APP}${uri}`, token)).status, 403, `${uri}: refused for nginx`);
  }
  t.equal((await forward(s, '/public/notes.txt')).status, 200, 'the bypass still lets the rest through');
});
