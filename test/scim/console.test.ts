// The console's SCIM tokens in Chromium: an administrator makes one (shown once), a provisioning
// client uses it at /scim/v2, the console lists its last use, and revoking it there shuts it out.
// Photographed at 360 and 1280 px.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { withAdmin } from '../helpers/server';

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
