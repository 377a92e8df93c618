// The console's SCIM page in Chromium: an administrator makes a token (shown once), a provisioning
// client uses it at /scim/v2, the console lists its last use, and revoking it there shuts it out;
// an app provisioned from the console (a scimmy target) is synced, listed, synced again, removed.
// Photographed at 360 and 1280 px.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { withAdmin } from '../helpers/server';
import { cli } from '../helpers/cli';
import { startScimTarget } from '../helpers/scim-target';

t.test('make, use and revoke a SCIM token from the console', async (t) => {
  const s = await withAdmin(t);
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  await page.goto(`${s.config.publicUrl}/admin/provisioning`);
  await page.getByLabel('Which service holds it?').fill('entra');
  await page.getByRole('button', { name: 'Make token' }).click();
  const token = (await page.locator('#scim-token').textContent())!.trim();
  t.match(token, /^ghscim_[A-Za-z0-9_-]{32}$/, 'the token, shown once');
  await screenshots(page, 'console-scim-token');

  const users = await fetch(`${s.url}/scim/v2/Users?count=1`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(users.status, 200, 'it opens /scim/v2');
  await page.goto(`${s.config.publicUrl}/admin/provisioning`);
  t.notMatch(await page.locator('main').textContent(), /ghscim_/, 'never shown again');
  t.notMatch(await page.locator('tbody').textContent(), /never/, 'its last use is listed');

  await page.getByLabel('Revoke entra').check();
  await page.getByRole('button', { name: 'Revoke' }).click();
  await page.getByText('The SCIM token is revoked').waitFor();
  await screenshots(page, 'console-scim');
  t.equal((await fetch(`${s.url}/scim/v2/Users`, { headers: { authorization: `Bearer ${token}` } })).status, 401, 'revoked: refused');
});

t.test('provision an app from the console: add (synced at once), see its queue, sync, remove', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const target = await startScimTarget(t);
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  await page.goto(`${s.config.publicUrl}/admin/provisioning`);
  await page.getByLabel("The app's SCIM base URL").fill(target.url);
  await page.getByLabel("The app's token").fill(target.token);
  await page.getByLabel('Name').fill('wiki');
  await page.getByRole('button', { name: 'Add and sync' }).click();
  await page.getByText('The push target is added').waitFor();
  await s.core.settle();
  t.equal(target.store.users.size, 1, 'the administrator is at the app');
  await page.goto(`${s.config.publicUrl}/admin/provisioning`);
  const row = page.locator('tbody tr', { hasText: 'wiki' });
  t.match(await row.textContent(), /up to date/);
  t.notMatch(await page.locator('main').textContent(), new RegExp(target.token), 'the token is not shown');
  await screenshots(page, 'console-scim-targets');

  target.store.users.clear();
  await row.getByRole('button', { name: 'Sync' }).click();
  await page.getByText('A sync is queued').waitFor();
  await s.core.settle();
  t.equal(target.store.users.size, 1, 'sync put back what the app lost');

  await page.getByLabel('Remove wiki').check();
  await page.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('The push target is removed').waitFor();
  t.same((await cli(s.dataDir, ['--json', 'scim', 'target', 'list'])).json.targets, []);
});
