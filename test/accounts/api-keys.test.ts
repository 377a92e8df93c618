// API keys (contract section 16): made from the shell, on /account and in the console, shown once, kept only as SHA-256; a script
// acts as the account on the HTTP API with `Authorization: Bearer gh_…` (a provisioning script
// creates accounts with an administrator's key); every way a key ends (revoked, expired, the
// account's auth_version bumped, disabled); refused one character off, on the pages and at
// forward authentication; last use recorded without a write per request; audited.
import { createHash } from 'node:crypto';
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, withAdmin } from '../helpers/server';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

t.test('from the shell: add (printed once), list, revoke; only the hash is stored', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'gil@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const made = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'gil@example.com', '--name', 'backup job', '--expires', '90d']);
  t.equal(made.code, 0, made.err);
  const key: string = made.json.key;
  t.match(key, /^gh_[A-Za-z0-9_-]{32}$/, 'gh_ and 192 random bits');
  t.match(made.json.api_key, { name: 'backup job', last_used_at: null });
  const days = (Date.parse(made.json.api_key.expires_at) - Date.now()) / 86_400_000;
  t.ok(days > 89.9 && days <= 90, 'expires in 90 days');
  const row = await s.db('api_key').first();
  t.equal(row.secret_hash, sha256(key), 'stored as its SHA-256');
  t.notMatch(JSON.stringify(await s.db('api_key')), key, 'never in clear');
  const plain = await cli(s.dataDir, ['user', 'api-key', 'add', 'gil@example.com', '--name', 'ci']);
  t.match(plain.out, /expires: +never \(until revoked\)\n/);
  t.match(plain.out, /key: +gh_\S{32}\n\nShown this once/);
  const listed = await cli(s.dataDir, ['--json', 'user', 'api-key', 'list', 'gil@example.com']);
  t.same(
    listed.json.api_keys.map((k: { name: string }) => k.name),
    ['backup job', 'ci'],
  );
  t.notMatch(listed.out, key, 'the list never shows it');
  t.match((await cli(s.dataDir, ['user', 'api-key', 'list', 'gil@example.com'])).out, /ID +NAME +CREATED +EXPIRES +LAST USED\n/);

  // Bad input: clear refusals, nothing stored.
  const before = await s.db('api_key').count({ n: '*' }).first();
  for (const [args, why] of [
    [['--name', ' '], 'an empty name'],
    [['--name', 'x', '--expires', 'soon'], 'an unreadable duration'],
    [['--name', 'x', '--expires', '10s'], 'under a minute'],
    [['--name', 'x', '--expires', '4000d'], 'over 5 years'],
  ] as const) {
    const r = await cli(s.dataDir, ['user', 'api-key', 'add', 'gil@example.com', ...args]);
    t.equal(r.code, 2, `${why}: exit 2 (${r.err.trim()})`);
  }
  t.equal((await cli(s.dataDir, ['user', 'api-key', 'add', 'nobody@example.com', '--name', 'x'])).code, 4, 'an unknown account: exit 4');
  t.same(await s.db('api_key').count({ n: '*' }).first(), before, 'nothing stored');
  t.equal((await cli(s.dataDir, ['user', 'api-key', 'revoke', 'gil@example.com', 'nope'])).code, 4, 'an unknown key: exit 4');
  t.equal((await cli(s.dataDir, ['user', 'api-key', 'revoke', 'gil@example.com', made.json.api_key.id])).code, 0);
  t.same(
    (await cli(s.dataDir, ['--json', 'user', 'api-key', 'list', 'gil@example.com'])).json.api_keys.map((k: { name: string }) => k.name),
    ['ci'],
  );
  t.ok(await s.db('audit_event').where({ event: 'api_key_added' }).first(), 'audited');
  t.ok(await s.db('audit_event').where({ event: 'api_key_revoked' }).first(), 'audited');
  t.notMatch(s.logs.join(''), key, 'in no log line');
});

t.test('a provisioning script creates accounts over the API with a key', async (t) => {
  const s = await withAdmin(t);
  const made = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'admin@example.com', '--name', 'provisioning']);
  const key: string = made.json.key;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${s.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/vnd.api+json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  for (const n of [1, 2, 3]) {
    const r = await api('POST', '/api/user_account', {
      data: { type: 'user_account', attributes: { email: `staff${n}@example.com`, name: `Staff ${n}`, password: PASSWORD, passwordConfirm: PASSWORD } },
    });
    t.equal(r.status, 201, `account ${n} created`);
  }
  const list = (await (await api('GET', '/api/user_account?filter=staff')).json()) as { data: Array<{ attributes: { email: string } }> };
  t.same(
    list.data.map((a: { attributes: { email: string } }) => a.attributes.email).sort(),
    [1, 2, 3].map((n) => `staff${n}@example.com`),
  );
  const me = (await (await api('GET', '/api/me')).json()) as { data: { id: string; attributes: { email: string } } };
  t.equal(me.data.attributes.email, 'admin@example.com', 'the key acts as its account');
  // A record by id (on PostgreSQL read in the same statement as the credential's check).
  const one = await api('GET', `/api/user_account/${me.data.id}`);
  t.equal(one.status, 200, 'a record by id, with the key');
  t.equal(((await one.json()) as { data: { attributes: { email: string } } }).data.attributes.email, 'admin@example.com');
  const created = await s.db('audit_event').where({ event: 'signup' });
  t.equal(created.length, 4, 'each creation audited (and the administrator before them)');
});

t.test('every way a key ends, and where it is refused', async (t) => {
  const clock = manualClock();
  // Forward authentication answers only a trusted proxy, for apps under the cookie domain.
  const s = await withAdmin(t, { trustProxy: '127.0.0.1', publicUrl: 'http://auth.gh.test:6336', cookieDomain: 'gh.test' }, { clock });
  await cli(s.dataDir, ['user', 'create', '--email', 'ivy@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const add = async (...extra: string[]) => (await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'ivy@example.com', '--name', 'k', ...extra])).json;
  const me = (key: string) => s.call('GET', '/api/me', { token: key });

  const first = await add();
  const ok = await me(first.key);
  t.equal(ok.status, 200);
  t.equal(ok.body.data.attributes.email, 'ivy@example.com');
  t.notOk(
    (await s.call('GET', '/api/user_account', { token: first.key })).body.data.some(
      (a: { attributes: { email: string } }) => a.attributes.email === 'admin@example.com',
    ),
    "an account's key reads what the account may read, no more",
  );
  const off = first.key.slice(0, -1) + (first.key.endsWith('A') ? 'B' : 'A');
  t.equal((await me(off)).status, 401, 'one character off: 401');
  t.equal((await me('gh_short')).status, 401, 'malformed: 401');

  // Last used: recorded, then not written again within the minute.
  const used = async () => (await s.db('api_key').where({ reference_id: first.api_key.id }).first()).last_used_at;
  const at = await used();
  t.ok(at, 'last use recorded');
  clock.advance(10_000);
  await me(first.key);
  t.equal(await used(), at, 'no write for a use within the minute');
  clock.advance(60_000);
  await me(first.key);
  t.ok(Number(await used()) > Number(at), 'a minute later, written again');

  // Not on the pages, not at forward authentication.
  const page = await fetch(`${s.url}/account`, { headers: { cookie: `gatehouse_session=${first.key}~${first.key}`, accept: 'text/html' }, redirect: 'manual' });
  t.not(page.status, 200, 'a key as a page cookie is not a page session');
  await cli(s.dataDir, ['group', 'create', 'family']);
  await cli(s.dataDir, ['group', 'add', 'family', 'ivy@example.com']);
  await cli(s.dataDir, ['app', 'add', '--host', 'app.gh.test', '--allow-group', 'family']);
  const ivy = await s.signin('ivy@example.com');
  const asPerson = await s.call('GET', '/auth/request', {
    token: ivy,
    headers: { 'x-original-url': 'http://app.gh.test/', 'x-original-method': 'GET' },
  });
  t.equal(asPerson.status, 200, 'forward authentication lets ivy in with a session');
  const forward = await s.call('GET', '/auth/request', {
    token: first.key,
    headers: { 'x-original-url': 'http://app.gh.test/', 'x-original-method': 'GET' },
  });
  t.equal(forward.status, 401, 'forward authentication: 401');

  // Revoked.
  await cli(s.dataDir, ['user', 'api-key', 'revoke', 'ivy@example.com', first.api_key.id]);
  const revoked = await me(first.key);
  t.equal(revoked.status, 401, 'revoked: 401 at once');
  // Issue 46, item 20: worded for a key, not as an access token to refresh.
  t.match(JSON.stringify(revoked.body), /the API key is not valid: it was revoked or has expired.*make a new key/);
  t.notMatch(JSON.stringify(revoked.body), /refresh/);
  // Expired.
  const brief = await add('--expires', '1h');
  t.equal((await me(brief.key)).status, 200);
  clock.advance(3600_000);
  t.equal((await me(brief.key)).status, 401, 'expired: 401');
  // The account's auth_version bumped (revoke-sessions; a password change does the same).
  const bumped = await add();
  t.equal((await me(bumped.key)).status, 200);
  await cli(s.dataDir, ['user', 'revoke-sessions', 'ivy@example.com']);
  const ended = await me(bumped.key);
  t.equal(ended.status, 401, 'revoke-sessions: 401');
  t.match(JSON.stringify(ended.body), /the API key is not valid/);
  // Disabled, and enabled again.
  const last = await add();
  await cli(s.dataDir, ['user', 'disable', 'ivy@example.com']);
  t.equal((await me(last.key)).status, 401, 'disabled: 401');
  await cli(s.dataDir, ['user', 'enable', 'ivy@example.com']);
  t.equal((await me(last.key)).status, 401, 'and enabled again: still ended (disabling moved the auth_version, as for sessions)');
  t.equal((await me((await add()).key)).status, 200, 'a new key works');
});

t.test('on /account (the owner) and in the console (an administrator): made, shown once, used, revoked', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'kit@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.url}/signin`);
  await fillSignin(page, 'kit@example.com');
  await page.waitForURL(/\/account/);
  await page.getByLabel('Which script is it for?').fill('photo sync');
  await page.getByLabel('It lasts').selectOption('30');
  await page.getByRole('button', { name: 'Make an API key' }).click();
  const key = (await page.locator('#api-key').textContent())!.trim();
  t.match(key, /^gh_[A-Za-z0-9_-]{32}$/);
  const row = await s.db('api_key').first();
  t.equal(row.secret_hash, sha256(key), 'the one shown is the one stored');
  t.ok(Math.abs(row.expires_at - row.created_at - 30 * 86_400_000) < 1000, 'lasts the 30 days chosen');
  await screenshots(page, 'account-api-key');
  // The key works for the script, as its owner.
  const me = await s.call('GET', '/api/user_account', { token: key });
  t.equal(me.status, 200);
  t.same(
    me.body.data.map((a: { attributes: { email: string } }) => a.attributes.email),
    ['kit@example.com'],
  );
  await page.goto(`${s.url}/account`);
  t.equal(await page.locator('#api-key').count(), 0, 'shown once');
  t.match(await page.locator('#api-key-list').textContent(), /photo sync[\s\S]*expires [\s\S]*last used [A-Z][a-z]{2} \d/);
  // A made-up lifetime from a hand-made form is refused, nothing stored.
  // (The page's own fetch, as a hand-made form would post: its cookie, its origin, its CSRF token.)
  const csrf = await page.locator('input[name=csrf]').first().inputValue();
  const refused = (await page.evaluate(`fetch('/account/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=${csrf}&apiKeyName=x&apiKeyExpires=toString',
    }).then(async (r) => ({ status: r.status, text: await r.text() }))`)) as { status: number; text: string };
  t.equal(refused.status, 400);
  t.match(refused.text, /Choose how long the key lasts/);
  t.equal((await s.db('api_key')).length, 1);
  await page.getByRole('button', { name: 'Revoke the API key photo sync' }).click();
  await page.waitForURL(/done=api_key_revoked/);
  t.equal((await s.db('api_key')).length, 0);
  t.equal((await s.call('GET', '/api/user_account', { token: key })).status, 401, 'revoked: refused at once');

  // An administrator in the console.
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${s.url}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  const ref = (await s.db('user_account').where({ email_key: 'kit@example.com' }).first()).reference_id;
  await admin.goto(`${s.url}/admin/accounts/${ref}`);
  await admin.getByLabel('Which script is it for?').fill('provisioning');
  await admin.getByLabel('It lasts').selectOption('never');
  await admin.getByRole('button', { name: 'Make an API key' }).click();
  const made = (await admin.locator('#api-key').textContent())!.trim();
  t.equal(sha256(made), (await s.db('api_key').first()).secret_hash);
  t.equal((await s.db('api_key').first()).expires_at, null, 'until revoked');
  await screenshots(admin, 'admin-api-key');
  await admin.goto(`${s.url}/admin/accounts/${ref}`);
  await admin.getByLabel('Revoke the API key provisioning').check();
  await admin.getByRole('button', { name: 'Revoke' }).click();
  await admin.waitForURL(/done=api_key_revoked/);
  t.equal((await s.db('api_key')).length, 0, 'revoked from the console');
  const events = (await s.db('audit_event').whereIn('event', ['api_key_added', 'api_key_revoked'])).map((e: { event: string }) => e.event);
  t.same(events.sort(), ['api_key_added', 'api_key_added', 'api_key_revoked', 'api_key_revoked'], 'each audited');
});
