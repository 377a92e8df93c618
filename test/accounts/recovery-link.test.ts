// A recovery link: `gatehouse user recovery-link` prints it; opened in Chromium it signs the
// person in to /account (said on the page), audited and told by mail; its session may add a
// passkey but nothing else (an invitation needs a real sign-in); replayed, it is refused clearly.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { passkeyServer } from '../helpers/passkeys';
import { errorCode, PASSWORD } from '../helpers/server';
import { browser } from '../helpers/amr-upstream';
import { startSmtp } from '../helpers/smtp';
import { addClient, APP, authorizationRequest, relyingParty } from '../helpers/oidc';

t.test('recovery link: made at the shell, opened once, 15 minutes to add a passkey, told by mail, replay refused', async (t) => {
  const smtp = await startSmtp(t);
  const { s, base } = await passkeyServer(t, { smtpUrl: smtp.url });
  const made = await cli(s.dataDir, ['--json', 'user', 'recovery-link', 'admin@example.com', '--expires', '1h']);
  t.equal(made.code, 0);
  const link = made.json.link as string;
  t.match(link, /\/recover#token=[A-Za-z0-9_-]{43}$/, 'a link carrying its token in the fragment');
  t.equal((await cli(s.dataDir, ['user', 'recovery-link', 'admin@example.com', '--expires', '9d'])).code, 2, 'at most 7 days');

  const browser = await launch(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(link);
  await page.getByRole('button', { name: 'Open my account' }).waitFor();
  await screenshots(page, 'recover');
  await page.getByRole('button', { name: 'Open my account' }).click();
  await page.waitForURL(/\/account/);
  t.match(await page.locator('.notice.success').textContent(), /recovery link: add a passkey or a password in the next 15 minutes/);
  await screenshots(page, 'recover-account');

  const session = await s.db('session').orderBy('created_at', 'desc').first();
  t.equal(session.method, 'recovery', 'a recovery session');
  t.ok(Number(session.expires_at) - Number(session.created_at) <= 15 * 60 * 1000, 'it ends within 15 minutes');
  const jwt = (await context.cookies()).find((c) => c.value.includes('~'))!.value.split('~')[0];
  t.equal((await s.action('user_account', 'passkey_options', {}, jwt)).status, 200, 'it may add a passkey');
  const invite = await s.action('user_account', 'invite', { email: 'new@example.com' }, jwt);
  t.equal(invite.status, 403);
  t.equal(errorCode(invite), 'reauthentication_required', 'and nothing else');
  // An outside finding: the session still changed the username and the shell and exported the
  // account's data, and an administrator's kept administration. Now it reads and writes no record,
  // runs only the actions that add a passkey or a password (or list and end sessions), and is no
  // administrator's.
  const refused = async (what: string, r: { status: number; body: unknown }) => {
    t.equal(r.status, 403, what);
    t.equal(errorCode(r as never), 'reauthentication_required', `${what}: said why`);
  };
  await refused('export_data', await s.action('user_account', 'export_data', {}, jwt));
  await refused('delete_account', await s.action('user_account', 'delete_account', {}, jwt));
  await refused('the account list', await s.call('GET', '/api/user_account', { token: jwt }));
  const me = (await s.db('user_account').where({ email: 'admin@example.com' }).first()) as { reference_id: string };
  const rename = await s.call('PATCH', `/api/user_account/${me.reference_id}`, {
    token: jwt,
    body: { data: { type: 'user_account', id: me.reference_id, attributes: { username: 'taken-over' } } },
  });
  await refused('a new username', rename);
  t.equal((await s.db('user_account').where({ email: 'admin@example.com' }).first()).username !== 'taken-over', true, 'the username is unchanged');
  t.equal((await s.call('GET', '/api/action', { token: jwt })).status, 403, "an administrator's recovery session is no administrator's");
  t.equal((await s.action('user_account', 'list_sessions', {}, jwt)).status, 200, 'it may list its sessions (and end them)');
  t.equal(await page.locator('form[action="/account/username"]').count(), 0, 'the page offers no username change');
  t.equal(await page.locator('#ssh-keys, #your-data, #delete-account, #language').count(), 0, 'nor keys, data, deletion or language');
  // An outside finding: an app behind forward authentication sent the browser to /signin with
  // rd, and /signin sent it straight back (a recovery session answers no app), and so on.
  await page.goto(`${base}/signin?rd=${encodeURIComponent(`${base}/account`)}`);
  t.equal(new URL(page.url()).pathname, '/signin', 'with rd, a recovery session is shown the sign-in form');
  t.ok((await page.locator('input[name=password]').count()) > 0);

  // An outside attack: the recovery session signed in to an app and got a refresh token that
  // outlived it. A recovery session answers no app: the app's sign-in asks for a real sign-in.
  const client = await addClient(s, '--first-party', '--public');
  const { url } = await authorizationRequest(await relyingParty(s, client), 'openid offline_access');
  const app = await context.newPage();
  await app.route(`${APP}/**`, (route) => route.fulfill({ status: 200, body: 'the app' }));
  await app.goto(url.href);
  await app.waitForLoadState();
  t.notOk(app.url().startsWith(APP), `the app gets no code (${new URL(app.url()).pathname})`);
  t.ok((await app.locator('input[type=password]').count()) > 0, 'the person is asked to sign in');
  await app.close();

  await s.core.settle();
  const told = await smtp.next('admin@example.com', 2);
  t.match(told.raw, /Subject: Your account was opened with a recovery link/, 'the person is told by mail');
  t.same(
    (await s.db('audit_event').whereIn('event', ['recovery_link_made', 'recovery_link_used']).orderBy('id')).map((r) => r.event),
    ['recovery_link_made', 'recovery_link_used'],
    'audited',
  );

  // Replayed in another browser: refused, saying why; nobody signed in.
  const other = await (await browser.newContext()).newPage();
  await other.goto(link);
  await other.getByRole('button', { name: 'Open my account' }).click();
  await other.locator('.notice.error').waitFor();
  t.match(await other.locator('.notice.error').textContent(), /recovery link is not valid or was already used/);
  await screenshots(other, 'recover-replayed');
  t.equal(Number((await s.db('session').where({ method: 'recovery' }).count({ n: '*' }))[0].n), 1, 'one recovery session');
});

t.test('a recovery link opened in a browser that was signed in ends the session it held', async (t) => {
  const { s } = await passkeyServer(t);
  const b = browser(s);
  await b.go('/signin');
  t.equal((await b.form('/signin', { email: 'admin@example.com', password: PASSWORD })).status, 303, 'signed in with the password');
  const openPasswordSessions = async () => Number((await s.db('session').whereNull('ended_at').where({ method: 'password' }).count({ n: '*' }).first())?.n);
  const before = await openPasswordSessions();
  const made = await cli(s.dataDir, ['--json', 'user', 'recovery-link', 'admin@example.com']);
  const token = /#token=(.+)$/.exec(made.json.link as string)![1];
  await b.go('/recover');
  const opened = await b.form('/recover', { token });
  t.equal(opened.location, '/account?done=recovery');
  t.equal(
    await openPasswordSessions(),
    before - 1,
    'the password session the browser held ended: one browser, one page session (an outside finding: it stayed open)',
  );
});
