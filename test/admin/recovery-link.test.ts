// The console makes a recovery link (CONTRACT 26): on an account's page, a confirmed button (a
// form with the console's CSRF token) shows the link once; opened in another browser it signs the
// person in to /account for 15 minutes. A post without the page's token makes nothing.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { passkeyServer } from '../helpers/passkeys';
import { PASSWORD } from '../helpers/server';

t.test('the console: a recovery link for an account, shown once, works once; no CSRF, no link', async (t) => {
  const { s, base } = await passkeyServer(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'kim@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const kim = await s.db('user_account').where({ email_key: 'kim@example.com' }).first();
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);

  // Without the page's CSRF token (another site's form): refused, nothing made.
  const forged = await admin.request.post(`${base}/admin/accounts/${kim.reference_id}/recovery-link`, { form: { confirm: 'yes' }, maxRedirects: 0 });
  t.not(forged.status(), 200, 'a post without the token is refused');
  t.equal(Number((await s.db('account_token').where({ purpose: 'recovery' }).count({ n: '*' }).first())?.n ?? 0), 0, 'no link made');

  await admin.goto(`${base}/admin/accounts/${kim.reference_id}`);
  await admin.getByLabel('Make a one-time link that opens this account').check();
  await admin.getByRole('button', { name: 'Make a recovery link' }).click();
  const link = (await admin.locator('#recovery-link').textContent())!.trim();
  t.match(link, new RegExp(`^${base}/recover#token=[A-Za-z0-9_-]{43}$`), 'the link, shown');
  await screenshots(admin, 'admin-recovery-link');
  t.ok(await s.db('audit_event').where({ event: 'recovery_link_made' }).first(), 'audited');
  await admin.goto(`${base}/admin/accounts/${kim.reference_id}`);
  t.equal(await admin.locator('#recovery-link').count(), 0, 'shown only once');

  const person = await (await browser.newContext()).newPage();
  await person.goto(link);
  await person.getByRole('button', { name: 'Open my account' }).click();
  await person.waitForURL(/\/account/);
  t.match(await person.locator('.notice.success').textContent(), /recovery link/);
  t.match(await person.locator('dl').textContent(), /kim@example\.com/, "signed in to Kim's account");
});
