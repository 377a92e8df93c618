// Forward authentication at the HTTP level (contract section 11): what /auth/forward and
// /auth/request answer for members, outsiders, guests, bypass paths, two-factor apps, bearer
// tokens, revoked sessions, apps added and removed while the server runs, and hostile input.
// The real proxies in front are in proxies.test.ts.
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock, totpAt, type ManualClock } from '../helpers/clock';
import { countRows, PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';

const APP = 'app.gh.test';

async function setUp(t: Parameters<typeof startTestServer>[0], clock?: ManualClock) {
  const s = await startTestServer(t, { trustProxy: '127.0.0.1', publicUrl: 'http://auth.gh.test:6336', cookieDomain: 'gh.test' }, undefined, { clock });
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  await s.signup('member@example.com');
  await s.signup('outsider@example.com');
  await cli(s.dataDir, ['group', 'create', 'family']);
  await cli(s.dataDir, ['group', 'add', 'family', 'member@example.com']);
  return { s, admin, member: await s.signin('member@example.com'), outsider: await s.signin('outsider@example.com') };
}

/** Asks as Caddy does: the original request in X-Forwarded-*. */
const forward = (
  s: TestServer,
  o: { host?: string; uri?: string; method?: string; token?: string; cookie?: string; accept?: string; headers?: Record<string, string> } = {},
) =>
  s.call('GET', '/auth/forward', {
    token: o.token,
    redirect: 'manual',
    headers: {
      'x-forwarded-proto': 'http',
      'x-forwarded-host': o.host ?? APP,
      'x-forwarded-uri': o.uri ?? '/',
      'x-forwarded-method': o.method ?? 'GET',
      accept: o.accept ?? 'text/html,application/xhtml+xml',
      ...(o.cookie ? { cookie: o.cookie } : {}),
      ...(o.headers ?? {}),
    },
  });

/** Asks as nginx does: X-Original-URL and X-Original-Method. */
const request = (s: TestServer, url: string, token?: string, accept = 'text/html') =>
  s.call('GET', '/auth/request', { token, headers: { 'x-original-url': url, 'x-original-method': 'GET', accept } });

t.test('members pass with every Remote-* header; outsiders get 403; guests are sent to sign in', async (t) => {
  const { s, member, outsider } = await setUp(t);
  t.equal((await forward(s, { token: member })).status, 403, 'a host with no app is refused (deny by default)');
  const added = await cli(s.dataDir, ['--json', 'app', 'add', '--host', APP, '--allow-group', 'family']);
  t.equal(added.code, 0, added.err);
  t.equal(added.json.allowed_groups[0].name, 'family');

  const ok = await forward(s, { token: member });
  t.equal(ok.status, 200);
  t.equal(ok.text, '');
  t.match(ok.headers.get('remote-user'), /^[0-9a-f-]{36}$/);
  t.equal(ok.headers.get('remote-email'), 'member@example.com');
  t.equal(ok.headers.get('remote-name'), 'member');
  t.equal(ok.headers.get('remote-groups'), 'family,users', 'managed groups only, by name: the dedicated group is left out');

  const no = await forward(s, { token: outsider });
  t.equal(no.status, 403);
  t.match(no.text, /not in a group this app allows/);

  const guest = await forward(s, { uri: '/dashboard?x=1&y=2' });
  t.equal(guest.status, 302);
  t.equal(guest.headers.get('location'), `http://auth.gh.test:6336/signin?rd=${encodeURIComponent('http://app.gh.test/dashboard?x=1&y=2')}`);
  t.equal((await forward(s, { method: 'POST' })).status, 303, 'after a non-GET: 303');
  t.equal((await forward(s, { accept: 'application/json' })).status, 401, 'an XHR or API client: 401, not a redirect');

  const viaNginx = await request(s, 'http://app.gh.test/x');
  t.equal(viaNginx.status, 401, '/auth/request answers 401');
  t.match(viaNginx.headers.get('location'), /\/signin\?rd=http%3A%2F%2Fapp\.gh\.test%2Fx$/, 'with the sign-in address for error_page');
  t.equal(viaNginx.headers.get('x-gatehouse-reason'), 'unauthenticated');
  const xhr = await request(s, 'http://app.gh.test/x', undefined, 'application/json');
  t.equal(xhr.status, 401);
  t.equal(xhr.headers.get('location'), null, 'an XHR: no sign-in address, so the nginx block keeps the 401');
  t.equal((await request(s, 'http://app.gh.test/x', member)).status, 200);
  const refused = await request(s, 'http://app.gh.test/x', outsider);
  t.equal(refused.status, 403);
  t.equal(refused.headers.get('x-gatehouse-reason'), 'not_in_group', 'the reason, for the proxy to show');
  t.equal(no.headers.get('x-gatehouse-reason'), 'not_in_group');
  const denied = await s.call('GET', '/auth/denied?reason=second_factor_required');
  t.equal(denied.status, 403);
  t.match(denied.text, /^This app requires signing in with two-factor authentication\.\n/);
  const unknown = await s.call('GET', '/auth/denied?reason=%3Cscript%3E');
  t.match(unknown.text, /^Gatehouse refused this request\./, 'an unknown reason is not echoed');
  t.notMatch(unknown.text, /script/);
  t.equal(await countRows(s, 'audit_event').then((n) => n > 0), true);
});

t.test('the session cookie counts like a bearer token; forged and expired tokens do not', async (t) => {
  const { s, member } = await setUp(t);
  await cli(s.dataDir, ['app', 'add', '--host', APP]);
  t.equal((await forward(s, { cookie: `gatehouse_session=${member}~refresh` })).status, 200, 'the pages cookie');
  const forged = member.slice(0, -4) + (member.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  t.equal((await forward(s, { token: forged, accept: '*/*' })).status, 401, 'a forged token');
  t.equal((await forward(s, { token: 'junk', accept: '*/*' })).status, 401, 'junk');
  const everyone = await forward(s, { token: member });
  t.equal(everyone.status, 200, 'an app without groups admits every signed-in account');
});

t.test('bypass paths, path prefixes, the longest prefix wins', async (t) => {
  const { s, member, outsider } = await setUp(t);
  await cli(s.dataDir, ['app', 'add', '--host', APP, '--bypass-path', '/public', '--bypass-path', '/health']);
  await cli(s.dataDir, ['app', 'add', '--host', APP, '--path', '/admin', '--allow-group', 'family']);
  const open = await forward(s, { uri: '/public/logo.png' });
  t.equal(open.status, 200, 'bypassed without a session');
  t.equal(open.headers.get('remote-user'), '', 'every Remote-* header present, empty');
  t.equal(open.headers.get('remote-groups'), '');
  t.equal((await forward(s, { uri: '/publicity' })).status, 302, 'a prefix matches whole segments');
  t.equal((await forward(s, { uri: '/public/../admin/x', token: outsider })).status, 403, 'dot segments are resolved before matching');
  t.equal((await forward(s, { uri: '/public/%2e%2e/admin', token: outsider })).status, 403, 'encoded dot segments too');
  t.equal((await forward(s, { uri: '/admin/users', token: outsider })).status, 403, '/admin needs family');
  t.equal((await forward(s, { uri: '/admin/users', token: member })).status, 200);
  t.equal((await forward(s, { uri: '/home', token: outsider })).status, 200, 'the rest of the host admits any account');
  const dup = await cli(s.dataDir, ['app', 'add', '--host', APP, '--path', '/admin']);
  t.equal(dup.code, 3, 'the same host and paths twice: a conflict (exit 3)');
});

t.test('issue 46, items 1-3: rules match the path the app reads; what apps read in more than one way is refused', async (t) => {
  const { s, member, outsider } = await setUp(t);
  await cli(s.dataDir, ['app', 'add', '--host', APP, '--bypass-path', '/public']);
  await cli(s.dataDir, ['app', 'add', '--host', APP, '--path', '/admin', '--allow-group', 'family']);
  // Each was 200 for a non-member (or for nobody, through the bypass) before.
  const guarded = ['/%61dmin/secret.txt', '//admin/secret.txt', '/x/../admin/secret.txt', '/public/%2e%2e/admin/secret.txt', '/public/./../admin/x'];
  for (const uri of guarded) {
    t.equal((await forward(s, { uri, token: outsider })).status, 403, `${uri}: the /admin rule (a non-member)`);
    t.equal((await forward(s, { uri, token: member })).status, 200, `${uri}: a member passes`);
    t.equal((await forward(s, { uri, accept: 'application/json' })).status, 401, `${uri}: not the /public bypass`);
  }
  const refused = [
    '/x/..%2fadmin/secret.txt',
    '/admin%2fsecret.txt',
    '/public/..%2fadmin/secret.txt',
    '/public/%2e%2e%2fadmin/secret.txt',
    '/public/..%5cadmin/secret.txt',
    '/public/..%252fadmin/secret.txt',
    '/admin;/',
    '/admin%00/',
    '/admin./',
    '/Admin/',
    '/%41dmin',
    '/PUBLIC/x',
    '/public\\..\\admin',
    '/../admin',
  ];
  for (const uri of refused) {
    for (const token of [outsider, undefined]) {
      const r = await forward(s, { uri, token });
      t.equal(r.status, 400, `${uri}: refused (${token ? 'signed in' : 'no session'})`);
      t.equal(r.headers.get('x-gatehouse-reason'), 'bad_path');
      t.match(r.text, /^refused: /, 'with a reason');
    }
    const viaNginx = await request(s, `http://${APP}${uri}?q=1`, outsider);
    t.equal(viaNginx.status, 403, `${uri} in X-Original-URL: refused too (403: nginx shows its denied page, not a 500)`);
    t.equal(viaNginx.headers.get('x-gatehouse-reason'), 'bad_path');
  }
  t.equal((await forward(s, { uri: '/public/a%20b.txt' })).status, 200, 'other encodings pass as they are');
  t.equal((await forward(s, { uri: '/public/caf%C3%A9?x=%2F' })).status, 200, 'an encoded / in the query is not the path');
  t.equal((await forward(s, { uri: '/administrator', token: outsider })).status, 200, 'a longer segment is not under /admin');
});

t.test('--two-factor admits only sessions that passed TOTP', async (t) => {
  const clock = manualClock();
  const { s, member } = await setUp(t, clock);
  await cli(s.dataDir, ['app', 'add', '--host', APP, '--two-factor']);
  const refused = await forward(s, { token: member });
  t.equal(refused.status, 403);
  t.match(refused.text, /two-factor/);
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, member);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  const confirm = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, member);
  const confirmed = confirm.body.find((i: { Attributes: { key?: string } }) => i.Attributes.key === 'token').Attributes.value;
  t.equal((await forward(s, { token: confirmed })).status, 200, 'the session that turned TOTP on passed it');
  clock.advance(30_000);
  const r = await s.action('user_account', 'signin', {
    email: 'member@example.com',
    password: PASSWORD,
    otp: await totpAt(secret, clock),
  });
  const fresh = r.body.find((i: { Attributes: { key?: string } }) => i.Attributes.key === 'token').Attributes.value;
  t.equal((await forward(s, { token: fresh })).status, 200, 'a signin with a code');
});

t.test('sign out, revoked sessions and removed apps end access at once', async (t) => {
  const { s, member } = await setUp(t);
  const added = await cli(s.dataDir, ['--json', 'app', 'add', '--host', APP, '--allow-group', 'family']);
  t.equal((await forward(s, { token: member })).status, 200);
  await cli(s.dataDir, ['group', 'remove', 'family', 'member@example.com']);
  t.equal((await forward(s, { token: member })).status, 403, 'leaving the group: refused on the next request');
  await cli(s.dataDir, ['group', 'add', 'family', 'member@example.com']);
  t.equal((await forward(s, { token: member })).status, 200);
  await cli(s.dataDir, ['user', 'revoke-sessions', 'member@example.com']);
  t.equal((await forward(s, { token: member, accept: '*/*' })).status, 401, 'revoked: not signed in any more');
  const again = await s.signin('member@example.com');
  await s.action('user_account', 'signout', {}, again);
  t.equal((await forward(s, { token: again, accept: '*/*' })).status, 401, 'signed out');
  const third = await s.signin('member@example.com');
  const removed = await cli(s.dataDir, ['app', 'remove', added.json.reference_id]);
  t.equal(removed.code, 0, removed.err);
  t.equal((await forward(s, { token: third })).status, 403, 'a removed app refuses from the next request on');
  const audit = await cli(s.dataDir, ['--json', 'audit']);
  t.ok(
    audit.json.events.some((e: { event: string }) => e.event === 'app_added'),
    'app_added audited',
  );
  t.ok(
    audit.json.events.some((e: { event: string }) => e.event === 'app_removed'),
    'app_removed audited',
  );
});

t.test('hostile input: untrusted peers, junk headers, huge URLs: a clear 4xx, never a 5xx, nothing stored', async (t) => {
  const { s, member } = await setUp(t);
  await cli(s.dataDir, ['app', 'add', '--host', APP]);
  const before = await countRows(s, 'forward_app');
  const untrusted = await startTestServer(t, { publicUrl: 'http://auth.gh.test:6336' });
  const spoofed = await forward(untrusted, { token: member });
  t.equal(spoofed.status, 403, 'no --trust-proxy: forwarded headers are not believed');
  t.match(spoofed.text, /trust-proxy setting/);
  t.equal(spoofed.headers.get('x-gatehouse-reason'), 'untrusted_proxy');
  t.ok(
    untrusted.logs.some((l) => /"path":"\/auth\/forward","status":403,"reason":"untrusted_proxy"/.test(l)),
    'the log line says why (it said only "status":403)',
  );
  const cases: Array<[string, Parameters<typeof forward>[1]]> = [
    ['no host', { host: '' }],
    ['a uri without a leading slash', { uri: 'http://evil/' }],
    ['a huge uri', { uri: '/' + 'a'.repeat(9000) }],
    ['a junk method', { method: 'GET /x HTTP/1.1' }],
    ['a junk host', { host: 'a b' }],
    ['a host with credentials', { host: 'user:pw@app.gh.test' }],
    ['a junk proto', { headers: { 'x-forwarded-proto': 'gopher' } }],
  ];
  for (const [what, o] of cases) {
    const r = await forward(s, { token: member, ...o });
    t.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status}`);
  }
  for (const url of ['', 'not a url', 'javascript:alert(1)', 'http://' + 'a'.repeat(9000)]) {
    const r = await request(s, url, member);
    t.ok(r.status >= 400 && r.status < 500, `X-Original-URL ${JSON.stringify(url.slice(0, 20))}: ${r.status}`);
  }
  t.equal(await countRows(s, 'forward_app'), before, 'nothing stored');
  const metrics = await s.call('GET', '/metrics', { token: (await s.signin('admin@example.com')) as string });
  t.match(metrics.text, /gatehouse_forward_auth_total\{outcome="bad_request"\}/);
});

t.test('app add refuses what cannot work; list, show and remove with --json', async (t) => {
  const { s } = await setUp(t);
  for (const bad of [
    ['--host', 'https://app.gh.test'],
    ['--host', 'app.gh.test:8080'],
    ['--host', APP, '--path', 'admin'],
    ['--host', APP, '--path', '/a/../b'],
    ['--host', APP, '--allow-group', 'nosuchgroup'],
  ]) {
    const r = await cli(s.dataDir, ['app', 'add', ...bad]);
    t.not(r.code, 0, bad.join(' '));
    t.match(r.err, /\S/, 'with a message');
  }
  const added = await cli(s.dataDir, ['--json', 'app', 'add', '--host', 'App.GH.test.', '--path', '/x/']);
  t.equal(added.json.host, 'app.gh.test', 'hosts are kept lower-case, without the trailing dot');
  t.same(added.json.paths, ['/x']);
  const list = await cli(s.dataDir, ['--json', 'app', 'list']);
  t.equal(list.json.apps.length, 1);
  const show = await cli(s.dataDir, ['app', 'show', 'app.gh.test']);
  t.match(show.out, /host:\s+app\.gh\.test/);
  t.equal((await cli(s.dataDir, ['app', 'show', 'nothing.gh.test'])).code, 4, 'not found: exit 4');
  t.equal((await cli(s.dataDir, ['app', 'remove', added.json.reference_id])).code, 0);
});
