// The console under hostile input: posts without the CSRF token or from another Origin, HTML in
// names (escaped everywhere), ids of other rows, huge and malformed searches, a non-administrator
// posting with a valid token. Each is refused with a clear answer and changes nothing.
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, startTestServer, type TestServer } from '../helpers/server';

/** A browser-like client: a cookie jar, the page's CSRF token, form posts. */
async function browserOf(s: TestServer, email: string) {
  const jar = new Map<string, string>();
  const go = async (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const res = await fetch(s.url + path, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  };
  const csrf = () => jar.get('gatehouse_csrf') ?? '';
  const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    go(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  await go('/signin');
  const signedIn = await post('/signin', { csrf: csrf(), email, password: PASSWORD });
  if (signedIn.status !== 303) throw new Error(`signin: ${signedIn.status}`);
  return { go, post, csrf };
}

t.test('hostile input to the console: refused clearly, nothing changed', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const env = { PW: PASSWORD };
  t.equal(
    (await cli(s.dataDir, ['user', 'create', '--email', 'mal@example.com', '--name', '<img src=x onerror=alert(1)>', '--password-env', 'PW'], { env })).code,
    0,
  );
  t.equal((await cli(s.dataDir, ['group', 'create', '<script>alert(1)</script>'])).code, 0);
  const admin = await browserOf(s, 'admin@example.com');

  // HTML in names is text wherever it shows.
  for (const path of ['/admin/accounts', '/admin/groups', '/admin/invitations', '/admin/clients', '/admin/apps']) {
    const page = await admin.go(path);
    t.equal(page.status, 200, path);
    t.notMatch(page.text, /<img src=x|<script>alert/, `${path}: no markup from a name`);
  }
  t.match((await admin.go('/admin/accounts')).text, /&lt;img src=x onerror=alert\(1\)&gt;/, 'shown escaped');
  t.match((await admin.go('/admin/groups')).text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);

  // No CSRF token, a wrong one, another Origin: 403, and guest signup stays closed.
  const before = await s.core.signupStatus();
  const attempts = [
    admin.post('/admin/signup', { guest: 'on', confirm: 'yes' }),
    admin.post('/admin/signup', { guest: 'on', confirm: 'yes', csrf: 'x'.repeat(43) }),
    admin.post('/admin/signup', { guest: 'on', confirm: 'yes', csrf: admin.csrf() }, { origin: 'https://evil.example' }),
  ];
  for (const r of await Promise.all(attempts)) t.equal(r.status, 403, 'refused');
  t.same(await s.core.signupStatus(), before, 'nothing changed');
  // Without the confirmation box: a clear message, nothing changed.
  const unconfirmed = await admin.post('/admin/signup', { guest: 'on', csrf: admin.csrf() });
  t.equal(unconfirmed.status, 400);
  t.match(unconfirmed.text, /tick the box to confirm/i);
  t.same(await s.core.signupStatus(), before);

  // Ids of other rows.
  const mal = await s.db('user_account').where({ email_key: 'mal@example.com' }).first();
  t.equal((await admin.go('/admin/accounts/00000000-0000-4000-8000-000000000000')).status, 404, 'an unknown account');
  t.equal((await admin.go('/admin/accounts/..%2F..%2Fetc')).status, 404, 'not an id at all');
  await s.signin('mal@example.com');
  const adminSession = (
    await s
      .db('session')
      .where({ account_id: (await s.db('user_account').where({ email_key: 'admin@example.com' }).first()).id })
      .first()
  ).id;
  const wrongSession = await admin.post(`/admin/accounts/${mal.reference_id}/sessions/end`, { csrf: admin.csrf(), session_id: adminSession });
  t.equal(wrongSession.status, 404, "another account's session is not this account's");
  t.equal((await s.db('session').where({ id: adminSession }).first()).ended_at, null, 'it stays open');
  const wrongPasskey = await admin.post(`/admin/accounts/${mal.reference_id}/passkeys/remove`, { csrf: admin.csrf(), confirm: 'yes', passkey_id: 'nope' });
  t.equal(wrongPasskey.status, 404);
  t.equal((await admin.go('/admin/groups/00000000-0000-4000-8000-000000000000')).status, 404);

  // Huge and malformed searches and pages.
  const long = await admin.go(`/admin/accounts?q=${'a'.repeat(300)}`);
  t.equal(long.status, 400);
  t.match(long.text, /at most 200 characters/);
  const junkCursor = await admin.go('/admin/accounts?after=%27%20OR%201%3D1--');
  t.equal(junkCursor.status, 400, 'a cursor that is no account');
  t.match(junkCursor.text, /start from the first page/);
  const wildcard = await admin.go('/admin/accounts?q=%25');
  t.equal(wildcard.status, 200);
  t.notMatch(wildcard.text, /mal@example\.com/, '% is a character, not a wildcard');
  const days = await admin.go('/admin/audit?days=999999');
  t.match(days.text, /days is a whole number/i);
  const event = await admin.go('/admin/audit?event=%3Cscript%3E');
  t.match(event.text, /lower-case letters/);
  t.notMatch(event.text, /<script>/);

  // A signed-in non-administrator, with a valid CSRF token: 404, nothing changed.
  const user = await browserOf(s, 'mal@example.com');
  const sneak = await user.post('/admin/signup', { guest: 'on', confirm: 'yes', csrf: user.csrf() });
  t.equal(sneak.status, 404);
  t.same(await s.core.signupStatus(), before);
  const promote = await user.post(`/admin/accounts/${mal.reference_id}/promote`, { confirm: 'yes', csrf: user.csrf() });
  t.equal(promote.status, 404);
  t.equal((await cli(s.dataDir, ['--json', 'user', 'show', 'mal@example.com'])).json.administrator, false, 'still not an administrator');
});
