// Sign-in by a mailed code, turned on and off by a configuration file and from the console (the
// shell's switch is test/accounts/signin-by-mail.test.ts), and the TOTP step after a mailed code:
// an account with two-factor authentication on is asked for its authenticator code next, in
// Chromium, and its session is then two-factor.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { fillSignin } from '../helpers/oidc';
import { passkeyServer } from '../helpers/passkeys';
import { PASSWORD, type TestServer } from '../helpers/server';
import { startSmtp, type MailSink } from '../helpers/smtp';

const offered = async (base: string) => /id="signin-by-mail"/.test(await fetch(`${base}/signin`).then((r) => r.text()));

async function mailedCode(s: TestServer, smtp: MailSink, email: string) {
  await s.core.settle();
  const until = Date.now() + 10_000;
  for (;;) {
    const mail = smtp.mails.filter((m) => m.to.includes(email) && /Subject: Your sign-in code/.test(m.raw)).at(-1);
    const code = mail && /\n {2}([ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8})\r?\n/.exec(mail.text)?.[1];
    if (code) return code;
    if (Date.now() > until) throw new Error(`no sign-in code to ${email}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('the configuration file and the console turn it on and off; a mailed code then asks for the TOTP code', async (t) => {
  const smtp = await startSmtp(t);
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, { smtpUrl: smtp.url }, { clock });
  t.notOk(await offered(base), 'off by default');

  // A configuration file: actions: signin_by_mail: {guest: true}, then false.
  const file = path.join(s.dataDir, 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\nactions:\n  signin_by_mail: {guest: true}\n');
  const on = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(on.code, 0, on.err);
  t.ok(await offered(base), 'on from the file');
  fs.writeFileSync(file, 'version: 1\nactions:\n  signin_by_mail: {guest: false}\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', file])).code, 0);
  t.notOk(await offered(base), 'off from the file');
  // The file lets go of it (no actions), so the console may change it.
  fs.writeFileSync(file, 'version: 1\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', file])).code, 0);

  // The console: the administrator turns it on.
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  await admin.goto(`${base}/admin/signup`);
  await admin.getByRole('button', { name: 'Turn sign-in by mail on' }).click();
  await admin.waitForURL(/done=signin_by_mail_on/);
  t.match((await admin.locator('#signin-by-mail-state').textContent())?.trim(), /^On\./);
  await screenshots(admin, 'admin-signin-by-mail-on');
  t.ok(await offered(base), 'on from the console');

  // Kim has TOTP on: a mailed code, then the authenticator's code.
  await cli(s.dataDir, ['user', 'create', '--email', 'kim@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const token = await s.signin('kim@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token)).status, 200);
  clock.advance(30_000);
  const kim = await (await browser.newContext()).newPage();
  await kim.goto(`${base}/signin`);
  await kim.locator('#signin-by-mail').click();
  await kim.getByLabel('Email').fill('kim@example.com');
  await kim.getByRole('button', { name: 'Email me a code' }).click();
  await kim.getByLabel('Code from the email').fill(await mailedCode(s, smtp, 'kim@example.com'));
  await kim.getByRole('button', { name: 'Sign in', exact: true }).click();
  await kim.getByLabel('Authentication code').waitFor();
  t.notMatch(kim.url(), /\/account/, 'not signed in on the mailed code alone');
  await screenshots(kim, 'signin-by-mail-totp-step');
  await kim.getByLabel('Authentication code').fill(await totpAt(secret, clock));
  await kim.getByRole('button', { name: 'Sign in', exact: true }).click();
  await kim.waitForURL(/\/account/);
  const session = await s.db('session').where({ method: 'mail' }).orderBy('created_at', 'desc').first();
  t.ok(session, 'a session opened by the mailed code');
  t.ok(session.two_factor, 'with its second factor');
  t.equal(session.second_factor, 'otp');

  // And off again from the console.
  await admin.goto(`${base}/admin/signup`);
  await admin.getByRole('button', { name: 'Turn sign-in by mail off' }).click();
  await admin.waitForURL(/done=signin_by_mail_off/);
  t.notOk(await offered(base), 'off from the console');
});
