// A recovery link's 15 minutes also set a password: someone who lost every way in (here, a
// password they forgot) sets a new one on /account without the old one, in Chromium, and signs in
// with it. The session stays the link's (it still ends when its 15 minutes do), and no access token
// it gives outlives it. Outside a recovery session, a password is changed with the current one;
// an account without a password sets its first.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { passkeyServer } from '../helpers/passkeys';
import { errorCode, PASSWORD } from '../helpers/server';

const NEW_PASSWORD = 'a brand new password for kim';
const payload = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as { exp: number; iat: number; sid: string };

t.test('a recovery session sets a password without the old one; its tokens end with it', async (t) => {
  const clock = manualClock();
  const { s } = await passkeyServer(t, {}, { clock });
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'kim@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  const made = await cli(s.dataDir, ['--json', 'user', 'recovery-link', 'kim@example.com']);
  t.equal(made.code, 0, made.err);

  const browser = await launch(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(made.json.link);
  await page.getByRole('button', { name: 'Open my account' }).click();
  await page.waitForURL(/\/account/);
  const opened = await s.db('session').where({ method: 'recovery' }).first();
  const jwt = (await context.cookies()).find((c) => c.value.includes('~'))!.value.split('~')[0];
  t.ok(payload(jwt).exp * 1000 <= Number(opened.expires_at), "the access token ends no later than the link's session");
  t.ok(payload(jwt).exp - payload(jwt).iat <= 15 * 60, 'within 15 minutes (--token-ttl is an hour)');

  // The password part asks only for the new password; no API key or app password form.
  const section = page.locator('#password');
  t.equal(await section.getByLabel('Current password').count(), 0, 'no current password asked');
  t.equal(await page.getByRole('button', { name: 'Make an API key' }).count(), 0, 'no API key form in a recovery session');
  await screenshots(page, 'recover-set-password');
  await section.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
  await section.getByLabel('New password again').fill(NEW_PASSWORD);
  await section.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL(/done=password/);
  t.ok(await s.db('audit_event').where({ event: 'password_set' }).first(), 'audited as a password set');
  t.ok(await s.signin('kim@example.com', NEW_PASSWORD), 'the new password signs in');
  t.equal((await s.action('user_account', 'signin', { email: 'kim@example.com', password: PASSWORD })).status, 401, 'the old one does not');

  // The page's new session is still the link's: it ends when the link's 15 minutes do, and so do its tokens.
  const carried = await s.db('session').where({ method: 'recovery' }).whereNull('ended_at').first();
  t.ok(carried, 'a recovery session still');
  t.ok(Number(carried.expires_at) <= Number(opened.expires_at), 'ending no later than the first');
  const jwt2 = (await context.cookies()).find((c) => c.value.includes('~'))!.value.split('~')[0];
  t.ok(payload(jwt2).exp * 1000 <= Number(opened.expires_at), 'its access token too');
  clock.advance(15 * 60 * 1000 + 1000);
  t.equal((await s.call('GET', '/api/me', { token: jwt2 })).status, 401, 'after 15 minutes the token is refused here');
  t.ok(payload(jwt2).exp * 1000 <= clock.now(), 'and its exp has passed for a backend that checks only the signature');

  // Outside a recovery session: the current password is needed to change it.
  const token = await s.signin('kim@example.com', NEW_PASSWORD);
  const bare = await s.action('user_account', 'change_password', { password: 'yet another password 123', passwordConfirm: 'yet another password 123' }, token);
  t.equal(bare.status, 400);
  t.equal(errorCode(bare), 'invalid_input');
  t.match(bare.text, /currentPassword is required/);
});
