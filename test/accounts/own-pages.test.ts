// People's own pages, through the HTTP API: sessions by device with how they signed in, sign out
// everywhere else, "last seen" moved at most every few minutes, the new-sign-in mail through a
// real SMTP server with its one-time link, one's data as JSON without a secret, deleting one's
// own account (never the last administrator, everything hanging off it gone, audited by id), and
// an app's access revoked while the app refreshes at the same moment (no token left alive).
import t from 'tap';
import { manualClock } from '../helpers/clock';
import { cli } from '../helpers/cli';
import { startSmtp, tokenIn } from '../helpers/smtp';
import { countRows, errorCode, PASSWORD, setSignup, withAdmin, type Reply } from '../helpers/server';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

type Item = { ResponseType: string; Attributes: Record<string, unknown> };
const item = (r: Reply, type: string) => (r.body as Item[]).find((i) => i.ResponseType === type)?.Attributes;
const stored = (r: Reply, key: string) =>
  (r.body as Item[]).find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === key)?.Attributes.value as string;
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

async function setUp(t: Parameters<typeof withAdmin>[0], flags = {}) {
  const clock = manualClock();
  const s = await withAdmin(t, flags, { clock });
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await s.signup('kim@example.com')).status, 200);
  const signin = async (userAgent: string, email = 'kim@example.com') => {
    const r = await s.call('POST', '/action/user_account/signin', {
      body: { attributes: { email, password: PASSWORD } },
      headers: { 'user-agent': userAgent },
    });
    t.equal(r.status, 200, `signed in as ${userAgent.slice(0, 20)}`);
    return { token: stored(r, 'token'), refresh: stored(r, 'refresh_token') };
  };
  const run = (name: string, attributes: Record<string, unknown>, tok?: string) => s.action('user_account', name, attributes, tok);
  return { ...s, clock, signin, run };
}

t.test('sessions by device, with how they signed in; sign out everywhere else keeps this one', async (t) => {
  const s = await setUp(t);
  const phone = await s.signin(SAFARI);
  const laptop = await s.signin(FIREFOX);
  const listed = item(await s.run('list_sessions', {}, laptop.token), 'sessions')!.sessions as Array<Record<string, unknown>>;
  t.equal(listed.length, 2);
  t.match(
    listed.find((x) => x.current),
    { device: 'Firefox on Windows', browser: 'Firefox', system: 'Windows', amr: ['pwd'], client: '127.0.0.1' },
  );
  t.match(
    listed.find((x) => !x.current),
    { device: 'Safari on iOS' },
  );
  const r = await s.run('signout_others', {}, laptop.token);
  t.equal(r.status, 200);
  t.match(item(r, 'client.notify'), { message: '1 other session is signed out' });
  t.equal((await s.call('GET', '/api/me', { token: phone.token })).status, 401, 'the other session is refused');
  t.equal((await s.run('refresh', { refresh_token: phone.refresh })).status, 401, 'and its refresh token too');
  t.equal((await s.call('GET', '/api/me', { token: laptop.token })).status, 200, 'this one stays');
});

t.test('last seen moves at most once per interval, not on every request', async (t) => {
  const s = await setUp(t);
  const me = await s.signin(FIREFOX);
  const lastUsed = async () => Number((await s.db('session').whereNot({ account_id: 1 }).first('last_used_at'))!.last_used_at);
  const opened = await lastUsed();
  s.clock.advance(60_000);
  t.equal((await s.call('GET', '/api/me', { token: me.token })).status, 200);
  t.equal(await lastUsed(), opened, 'a request a minute later writes nothing');
  s.clock.advance(5 * 60_000);
  await Promise.all([1, 2, 3].map(() => s.call('GET', '/api/me', { token: me.token })));
  t.equal(await lastUsed(), opened + 6 * 60_000, 'six minutes later, requests at once move it once, to now');
});

t.test('a sign-in from a new browser is told by mail, with a link that ends that session once', async (t) => {
  const smtp = await startSmtp(t);
  const s = await setUp(t, { smtpUrl: smtp.url });
  await s.signin(FIREFOX);
  await s.signin(FIREFOX);
  const intruder = await s.signin(SAFARI);
  const told = () => smtp.mails.filter((m) => /Subject: A new sign-in/.test(m.raw));
  while (told().length === 0) await new Promise((r) => setTimeout(r, 20));
  const mail = told()[0];
  t.match(mail.raw, /Subject: A new sign-in to your account/);
  t.match(mail.text, /Browser: Safari on iOS/);
  t.match(mail.text, /Address: 127\.0\.0\.1/);
  t.match(mail.text, /When: {4}[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d\W{1,3}[AP]M UTC/, 'when, as English writes it');
  t.match(mail.text, new RegExp(`${s.config.publicUrl}/end-session#token=`));
  await s.signin(SAFARI);
  await s.signin(FIREFOX);
  // The queue is durable and sent in order: a later mail would already be there after this one.
  await s.run('request_verification', {}, (await s.signin(FIREFOX)).token);
  await smtp.next('kim@example.com', 3);
  t.equal(told().length, 1, 'the same browsers again are not told, nor was the first');

  const link = tokenIn(mail);
  const ended = await s.run('end_session', { token: link });
  t.equal(ended.status, 200);
  t.equal((await s.call('GET', '/api/me', { token: intruder.token })).status, 401, 'that session is ended');
  const again = await s.run('end_session', { token: link });
  t.equal(errorCode(again), 'token_invalid', 'the link works once');
  t.equal((await s.run('end_session', { token: 'x'.repeat(43) })).status, 400);
});

t.test('one’s data as JSON: every part, never a secret or a hash', async (t) => {
  const s = await setUp(t);
  const kim = await s.signin(FIREFOX);
  await s.run('totp_enroll', { password: PASSWORD }, kim.token);
  const totpSecret = String((await s.db('user_account').where({ email: 'kim@example.com' }).first('totp_secret'))!.totp_secret);
  const key = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'kim@example.com', '--name', 'backup script']);
  const appPassword = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'kim@example.com', '--name', 'mail']);
  // An outside finding: the download left out SSH keys and the language chosen.
  const pub = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPcB2xAnyxMnNUq/fILBeR+NY2oiDu4f03mavXYPb1fu laptop';
  t.equal((await cli(s.dataDir, ['user', 'ssh-key', 'add', 'kim@example.com', '-'], { stdin: pub })).code, 0);
  await s.db('user_account').where({ email: 'kim@example.com' }).update({ language: 'de' });
  const r = await s.run('export_data', {}, kim.token);
  t.equal(r.status, 200);
  const data = item(r, 'account.data')!.data as Record<string, any>;
  t.match(data.ssh_keys, [{ key: pub, fingerprint: /^SHA256:/ }], 'its SSH keys');
  t.match(data.account, { language: 'de', login_shell: null }, 'its language and shell');
  t.match(data.account, { email: 'kim@example.com', administrator: false });
  t.ok(Array.isArray(data.groups) && data.groups.length > 0, 'groups');
  t.equal(data.sessions.length, 1);
  t.same(data.two_factor, { totp_enabled: false });
  t.match(data.api_keys, [{ name: 'backup script' }]);
  t.match(data.app_passwords, [{ name: 'mail' }]);
  t.ok(
    data.audit.some((e: { event: string }) => e.event === 'signin_ok'),
    'the audit entries about the account',
  );
  const text = JSON.stringify(data);
  const hash = String((await s.db('user_account').where({ email: 'kim@example.com' }).first('password'))!.password);
  for (const secret of [hash, totpSecret, JSON.parse(key.out).secret, JSON.parse(appPassword.out).secret, kim.refresh]) {
    t.notOk(text.includes(secret), 'no secret in the download');
  }
  t.notMatch(text, /\$2[aby]\$/, 'no bcrypt hash');
});

t.test('deleting one’s own account: the password, never the last administrator, everything goes, audited by id', async (t) => {
  const s = await setUp(t);
  const kim = await s.signin(FIREFOX);
  await cli(s.dataDir, ['user', 'api-key', 'add', 'kim@example.com', '--name', 'k']);
  const kimRow = (await s.db('user_account').where({ email: 'kim@example.com' }).first())!;
  t.equal(errorCode(await s.run('delete_account', { password: 'wrong password here' }, kim.token)), 'invalid_credentials');
  t.equal(errorCode(await s.run('delete_account', { password: PASSWORD }, s.adminToken)), 'last_administrator', 'never the last administrator');
  const r = await s.run('delete_account', { password: PASSWORD }, kim.token);
  t.equal(r.status, 200);
  t.notOk(await s.db('user_account').where({ id: kimRow.id }).first(), 'the account is gone');
  for (const table of ['session', 'api_key', 'membership', 'known_signin', 'account_token']) {
    t.equal(Number((await s.db(table).where({ account_id: kimRow.id }).count({ n: '*' }).first())!.n), 0, `no ${table} row left`);
  }
  t.notOk(await s.db('usergroup').where({ user_account_id: kimRow.id }).first(), 'its own group is gone');
  t.equal((await s.call('GET', '/api/me', { token: kim.token })).status, 401);
  const audit = (await s.db('audit_event').where({ event: 'account_deleted' }).first())!;
  t.equal(audit.account, kimRow.reference_id, 'audited by id');
  t.notMatch(String(audit.details), /kim/, 'without the email or name');
});

t.test('an account a SCIM client provisions is deleted there: refused here unless an administrator forces it', async (t) => {
  const s = await setUp(t);
  const kim = await s.signin(FIREFOX);
  await s.db('user_account').where({ email: 'kim@example.com' }).update({ external_id: 'entra-42' });
  const r = await s.run('delete_account', { password: PASSWORD }, kim.token);
  t.equal(r.status, 403);
  t.match(item(r, 'client.notify') ?? r.body[0].Attributes, { reason: 'managed_by_scim' });
  const noYes = await cli(s.dataDir, ['user', 'delete', 'kim@example.com']);
  t.equal(noYes.code, 2, 'the shell refuses without --yes');
  t.match(noYes.err, /--yes/);
  const refused = await cli(s.dataDir, ['user', 'delete', 'kim@example.com', '--yes']);
  t.equal(refused.code, 3);
  t.match(refused.err, /provisioned over SCIM.*--force/);
  t.equal((await cli(s.dataDir, ['user', 'delete', 'admin@example.com', '--yes', '--force'])).code, 3, 'never the last administrator, forced or not');
  const forced = await cli(s.dataDir, ['user', 'delete', 'kim@example.com', '--yes', '--force']);
  t.equal(forced.code, 0, forced.err);
  t.equal(await countRows(s, 'user_account'), 1);
});

t.test('an app revoked while it refreshes at once leaves no live token; its back-channel logout is queued', async (t) => {
  const s = await setUp(t, { webhookAllowPrivate: 'loopback' });
  const added = await cli(
    s.dataDir,
    ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party', '--backchannel-logout-uri', 'http://localhost:3999/logout'],
    {
      env: { GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'loopback' },
    },
  );
  t.equal(added.code, 0, added.err);
  const client = added.json as { client_id: string; client_secret: string };
  const adminRef = String((await s.db('user_account').where({ email: 'admin@example.com' }).first('reference_id'))!.reference_id);
  for (let trial = 0; trial < 8; trial++) {
    const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
    const first = await token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    t.equal(first.status, 200);
    const apps = item(await s.run('list_apps', {}, s.adminToken), 'apps')!.apps as Array<Record<string, unknown>>;
    t.match(apps, [{ kind: 'oidc', id: client.client_id, offline: true, scopes: ['offline_access', 'openid'] }]);
    // The revocation and the app's refresh, sent at once (one refresh: two would end the grant by reuse detection).
    const [revoked, ...refreshes] = await Promise.all([
      s.run('revoke_app', { kind: 'oidc', app_id: client.client_id }, s.adminToken),
      token(s.url, client, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token }),
    ]);
    t.equal(revoked.status, 200, `trial ${trial}: revoked`);
    for (const refreshed of refreshes) {
      if (refreshed.status !== 200) continue;
      t.equal((await token(s.url, client, { grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token })).json.error, 'invalid_grant');
      const userinfo = await fetch(`${s.url}/oidc/me`, { headers: { authorization: `Bearer ${refreshed.json.access_token}` } });
      t.equal(userinfo.status, 401, 'the access token the racing refresh got is refused');
    }
    t.equal((await token(s.url, client, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token })).json.error, 'invalid_grant');
    const live = await s.db('oidc_payload').whereIn('model', ['AccessToken', 'RefreshToken', 'Grant', 'AuthorizationCode']).where({ account: adminRef });
    t.same(live, [], `trial ${trial}: no grant or token of the account left`);
    t.same(item(await s.run('list_apps', {}, s.adminToken), 'apps')!.apps, [], 'the app is no longer listed');
  }
  t.ok((await s.db('delivery').where({ kind: 'logout' }).count({ n: '*' }).first())!.n, 'a back-channel logout was queued');
});
