// The account page's revoke and sign-out buttons reach an app nobody in this project wrote: Apache
// httpd with mod_auth_openidc, registered with a back-channel logout URI. A person signed in to it
// revokes its access on /account (its grant ends; the logout token travels through the delivery
// queue; Apache's next answer sends her to sign in again), and, from another browser, signs out
// "everywhere else" or one session alone: the app that session signed in to hears it.
import t, { type Test } from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { freePort, launch } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { setSignup, startTestServer, type TestServer } from '../helpers/server';
import { type OidcApache, signedInAs, startOidcApache, waitSignedOut } from '../helpers/apache-openidc';

async function provider(t: Test, ...emails: string[]): Promise<TestServer> {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}`, webhookAllowPrivate: ['loopback'] });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  for (const email of emails) await s.signup(email);
  return s;
}

async function signInThrough(browser: Browser, apache: OidcApache, email: string): Promise<BrowserContext> {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(apache.page);
  await fillSignin(page, email);
  await page.waitForURL((u) => u.href.startsWith(apache.page), { timeout: 10_000 });
  await page.close();
  return ctx;
}

async function accountPage(s: TestServer, ctx: BrowserContext, email?: string): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`${s.config.publicUrl}/account`);
  if (email) {
    await fillSignin(page, email);
    await page.waitForURL(/\/account/);
  }
  return page;
}

t.test('revoking the app on /account ends its grant and its Apache session', async (t) => {
  const s = await provider(t, 'ada@example.com', 'bob@example.com');
  const apache = await startOidcApache(t, s, { backchannel: true });
  const browser = await launch(t);
  const ada = await signInThrough(browser, apache, 'ada@example.com');
  const bob = await signInThrough(browser, apache, 'bob@example.com');
  t.equal(await signedInAs(apache, ada), 'ada@example.com');

  const page = await accountPage(s, ada);
  t.match(await page.locator('#apps').textContent(), /Wiki/, 'the app is listed');
  await page.getByRole('button', { name: 'Revoke the access of Wiki' }).click();
  await page.waitForURL(/done=app_revoked/);
  t.ok(await waitSignedOut(apache, ada), 'her Apache session ends', { logs: apache.logs() });
  t.equal(await signedInAs(apache, bob), 'bob@example.com', 'another person stays signed in');
  const ref = String((await s.db('user_account').where({ email: 'ada@example.com' }).first('reference_id'))!.reference_id);
  t.same(await s.db('oidc_payload').whereIn('model', ['Grant', 'AccessToken', 'RefreshToken']).where({ account: ref }), [], 'no grant or token of hers left');
});

t.test('signing out everywhere else, or one session, from another browser reaches the app', async (t) => {
  const s = await provider(t, 'ada@example.com');
  const apache = await startOidcApache(t, s, { backchannel: true });
  const browser = await launch(t);

  const laptop = await signInThrough(browser, apache, 'ada@example.com');
  const phone = await browser.newContext();
  const page = await accountPage(s, phone, 'ada@example.com');
  await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await page.waitForURL(/done=others/);
  t.ok(await waitSignedOut(apache, laptop), 'everywhere else: the laptop’s Apache session ends', { logs: apache.logs() });
  t.match(await page.locator('#sessions').textContent(), /this browser/, 'this browser stays signed in');

  const tablet = await signInThrough(browser, apache, 'ada@example.com');
  await page.goto(`${s.config.publicUrl}/account`);
  await page.locator('#sessions form[action="/account/sessions/revoke"] button').first().click();
  await page.waitForURL(/done=revoked/);
  t.ok(await waitSignedOut(apache, tablet), 'one session ended alone: its Apache session ends', { logs: apache.logs() });
});
