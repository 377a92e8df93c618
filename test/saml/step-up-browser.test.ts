// SAML step-up in Chromium, as people meet it: an administrator adds an app in the console with
// "Require two factors"; Ada, who has a passkey but signed in with her password alone, starts a
// sign-in at the app, is asked for her second factor on Gatehouse's confirm page, uses the passkey
// and arrives at the app (node-saml) with AuthnContextClassRef REFEDS MFA. Bob, who has no second
// factor, reads a page that says how to add one; its button takes the app a signed AuthnFailed.
// Photographed at 360 and 1280 px.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { credentialsOf, passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { ACS, nodeSamlSp } from '../helpers/saml';

const MFA = 'https://refeds.org/profile/mfa';

/** Catches what the browser posts to the app's ACS URL (the app itself is node-saml, in this process). */
async function atTheApp(page: Page): Promise<() => string | undefined> {
  let posted: string | undefined;
  await page.route(ACS, async (route) => {
    posted = new URLSearchParams(route.request().postData() ?? '').get('SAMLResponse') ?? undefined;
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'at the app' });
  });
  return () => posted;
}

t.test('console --two-factor; a passkey given on the confirm page; an account with none told how to add one', async (t) => {
  const { s, base } = await passkeyServer(t);
  for (const email of ['ada@example.com', 'bob@example.com']) await s.signup(email);
  const sp = await nodeSamlSp(s);
  const browser = await launch(t);

  // The administrator registers the app in the console, asking for two factors.
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  await admin.goto(`${base}/admin/saml`);
  await admin.getByLabel("The app's metadata").fill(sp.metadata);
  await admin.getByLabel('Name', { exact: true }).fill('Wiki');
  await admin.getByLabel(/Require two factors/).check();
  await admin.getByRole('button', { name: 'Add SAML app' }).click();
  await admin.getByText('The SAML app is added').waitFor();
  t.match(await admin.locator('table').first().textContent(), /Wiki[\s\S]*required/, 'the console lists it as requiring two factors');
  t.match((await cli(s.dataDir, ['--json', 'saml', 'sp', 'list'])).json.service_providers, [{ name: 'Wiki', two_factor: true }], 'the shell sees it');
  await screenshots(admin, 'console-saml-two-factor');

  // Ada adds a passkey (her password sign-in is recent), then signs in again with the password alone.
  const ada = await withAuthenticator(browser);
  await ada.page.goto(`${base}/signin`);
  await fillSignin(ada.page, 'ada@example.com');
  await ada.page.waitForURL(/\/account/);
  await ada.page.getByLabel('Name of the new passkey').fill('Laptop');
  await ada.page.getByRole('button', { name: 'Add a passkey' }).click();
  await ada.page.waitForURL(/done=passkey_added/);
  const [credential] = await credentialsOf(ada);
  // Off the authenticator while she signs in with her password (it would answer the page's passkey
  // autofill at once), back on for the confirm page.
  await ada.cdp.send('WebAuthn.removeCredential', { authenticatorId: ada.authenticatorId, credentialId: credential!.credentialId });
  await ada.page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await ada.page.goto(`${base}/signin`);
  await fillSignin(ada.page, 'ada@example.com');
  await ada.page.waitForURL(/\/account/);
  const session = await s.db('session').where({ ended_at: null }).orderBy('created_at', 'desc').first();
  t.notOk(session.two_factor === true || session.two_factor === 1, 'a password session: one factor');
  await ada.cdp.send('WebAuthn.addCredential', { authenticatorId: ada.authenticatorId, credential: { ...credential! } });

  const posted = await atTheApp(ada.page);
  await ada.page.goto(await sp.saml.getAuthorizeUrlAsync('relay-b', undefined, {}));
  await ada.page.waitForURL(/\/signin\/confirm\?/);
  t.match(await ada.page.locator('main').textContent(), /asks for a second factor/, 'the confirm page says why it asks');
  await screenshots(ada.page, 'saml-step-up-confirm');
  await ada.page.getByRole('button', { name: 'Use a passkey' }).click();
  await ada.page.waitForURL(ACS);
  t.ok(posted(), 'back at the app with a Response');
  const xml = Buffer.from(posted()!, 'base64').toString('utf8');
  t.match(xml, new RegExp(`AuthnContextClassRef>${MFA}<`), 'REFEDS MFA');
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted()! });
  t.equal(profile!.nameID, 'ada@example.com', 'node-saml accepts it');

  // Bob has no second factor: a page that says so, and how to add one; nothing goes by itself.
  const bob = await (await browser.newContext()).newPage();
  const bobPosted = await atTheApp(bob);
  await bob.goto(`${base}/signin`);
  await fillSignin(bob, 'bob@example.com');
  await bob.waitForURL(/\/account/);
  await bob.goto(await sp.saml.getAuthorizeUrlAsync('relay-c', undefined, {}));
  await bob.getByRole('heading', { name: 'A second factor is needed' }).waitFor();
  t.match(await bob.getByRole('alert').textContent(), /Wiki asks for a second factor/);
  t.equal(await bob.getByRole('link', { name: 'Add a second factor' }).getAttribute('href'), '/account');
  t.equal(bobPosted(), undefined, 'nothing posted by itself');
  await screenshots(bob, 'saml-no-second-factor');
  await bob.getByRole('button', { name: 'Back to Wiki (not signed in)' }).click();
  await bob.waitForURL(ACS);
  t.match(Buffer.from(bobPosted()!, 'base64').toString('utf8'), /status:AuthnFailed/, 'the app gets AuthnFailed');
  await t.rejects(sp.saml.validatePostResponseAsync({ SAMLResponse: bobPosted()! }), /Responder error/, 'which node-saml reads as a failed sign-in');
});
