// The console's OpenID Connect clients: two factors and back-channel logout, set and shown (Chromium, phone and desktop).
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin, providerWith } from '../helpers/oidc';

t.test('a client added with two factors and a back-channel logout URI; two factors switched off and on', async (t) => {
  const s = await providerWith(t);
  const base = s.config.publicUrl;
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);

  await admin.goto(`${base}/admin/clients`);
  await admin.getByLabel('Name', { exact: true }).fill('Wiki');
  await admin.getByLabel('Redirect URIs').fill('https://wiki.example.com/callback');
  await admin.getByLabel('Back-channel logout URI').fill('https://wiki.example.com/backchannel-logout');
  await admin.getByLabel('Two factors: a sign-in with one is asked for the second').check();
  await admin.getByRole('button', { name: 'Add client' }).click();
  await admin.locator('#client-secret').waitFor();
  const [client] = (await cli(s.dataDir, ['--json', 'client', 'list'])).json.clients;
  t.equal(client.two_factor, true);
  t.equal(client.backchannel_logout_uri, 'https://wiki.example.com/backchannel-logout');

  await admin.goto(`${base}/admin/clients`);
  const row = () => admin.locator('tr', { hasText: 'Wiki' });
  t.match(await row().textContent(), /two factors required[\s\S]*logouts to https:\/\/wiki\.example\.com\/backchannel-logout/);
  await screenshots(admin, 'admin-clients-two-factor');
  await row().getByRole('button', { name: 'Allow one factor' }).click();
  await admin.waitForURL(/done=client_changed/);
  t.equal((await cli(s.dataDir, ['--json', 'client', 'show', client.client_id])).json.two_factor, false, 'switched off');
  t.notMatch(await row().textContent(), /two factors required/);
  await row().getByRole('button', { name: 'Require two factors' }).click();
  await admin.waitForURL(/done=client_changed/);
  t.equal((await cli(s.dataDir, ['--json', 'client', 'show', client.client_id])).json.two_factor, true, 'and on again');

  // A forged switch value is refused, never read as "off" (outsider review).
  await admin.evaluate(`document.querySelector('form[action="/admin/clients/two-factor"] input[name="two_factor"]').value = 'maybe'`);
  await row().getByRole('button', { name: 'Allow one factor' }).click();
  t.match(await admin.getByRole('alert').textContent(), /must be on or off/);
  t.equal((await cli(s.dataDir, ['--json', 'client', 'show', client.client_id])).json.two_factor, true, 'unchanged');

  // A back-channel URI that is not https (nor localhost) is refused, in the console's words.
  await admin.getByLabel('Name', { exact: true }).fill('Plain');
  await admin.getByLabel('Redirect URIs').fill('https://plain.example.com/callback');
  await admin.getByLabel('Back-channel logout URI').fill('http://plain.example.com/logout');
  await admin.getByRole('button', { name: 'Add client' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^“Back-channel logout URI” must be https/);
  const audit = (await cli(s.dataDir, ['--json', 'audit'])).json;
  t.equal(JSON.stringify(audit).match(/"client_changed"/g)?.length, 2, 'each change is audited');
});

t.test('ID token claims: chosen when a client is added, changed on its row (Chromium, phone and desktop)', async (t) => {
  const s = await providerWith(t);
  const base = s.config.publicUrl;
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);

  await admin.goto(`${base}/admin/clients`);
  await admin.getByLabel('Name', { exact: true }).fill('Proxy');
  await admin.getByLabel('Redirect URIs').fill('https://proxy.example.com/oauth2/callback');
  const form = admin.locator('form[action="/admin/clients"]');
  await form.getByLabel('groups (groups scope)').check();
  await form.getByLabel('email (email scope)').check();
  await admin.getByRole('button', { name: 'Add client' }).click();
  await admin.locator('#client-secret').waitFor();
  const [client] = (await cli(s.dataDir, ['--json', 'client', 'list'])).json.clients;
  t.same(client.id_token_claims, ['email', 'groups']);

  await admin.goto(`${base}/admin/clients`);
  const row = () => admin.locator('tr', { hasText: 'Proxy' });
  t.match(await row().textContent(), /ID token: email, groups/);
  await row().getByText('ID token claims').click();
  await screenshots(admin, 'admin-clients-id-token-claims');
  t.equal(await row().getByLabel('groups (groups scope)').isChecked(), true, 'the chosen ones ticked');
  await row().getByLabel('email (email scope)').uncheck();
  await row().getByLabel('name (profile scope)', { exact: true }).check();
  await row().getByRole('button', { name: 'Save claims' }).click();
  await admin.waitForURL(/done=client_changed/);
  t.same((await cli(s.dataDir, ['--json', 'client', 'show', client.client_id])).json.id_token_claims, ['name', 'groups']);
  t.match(await row().textContent(), /ID token: name, groups/);
});
