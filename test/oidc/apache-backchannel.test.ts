// Back-channel logout (OpenID Connect Back-Channel Logout 1.0) with a relying party nobody in this
// project wrote: Apache httpd with mod_auth_openidc, registered with
// --backchannel-logout-uri <its redirect URI>?logout=backchannel. People sign in through Apache
// on Gatehouse's sign-in page (Chromium); when their Gatehouse session ends (an operator's
// `user revoke-sessions`, `user disable`, the account deleted, a sign-out on Gatehouse's pages, an
// RP-initiated logout at another app), the logout token travels through the delivery queue and
// Apache's next answer for their page sends them to sign in again. Other people stay signed in.
import t, { type Test } from 'tap';
import type { Browser, BrowserContext } from 'playwright-core';
import { freePort, launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';
import { PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';
import { type OidcApache, signedInAs, startOidcApache, waitSignedOut } from '../helpers/apache-openidc';

/** A provider whose deliveries may go to this computer (the Apache relying parties are on it). */
async function provider(t: Test, ...emails: string[]): Promise<TestServer> {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}`, webhookAllowPrivate: ['loopback'] });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  for (const email of emails) await s.signup(email);
  return s;
}

/** A fresh browser context signed in to `apache` as `email`, on Gatehouse's sign-in page; it ends on Apache's page. */
async function signInThrough(browser: Browser, apache: OidcApache, email: string, context?: BrowserContext): Promise<BrowserContext> {
  const ctx = context ?? (await browser.newContext());
  const page = await ctx.newPage();
  await page.goto(apache.page);
  if (!page.url().startsWith(apache.url)) {
    await fillSignin(page, email);
    await page
      .waitForURL((u) => u.href.startsWith(apache.page), { timeout: 10_000 })
      .catch(async (err) => {
        throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.slice(0, 400)}\n${apache.logs()}`);
      });
  }
  await page.close();
  return ctx;
}

/** Asserts that `context`'s Apache session ends within the wait (Apache's logs shown if not). */
async function ends(t: Test, apache: OidcApache, context: BrowserContext, message: string): Promise<void> {
  const ended = await waitSignedOut(apache, context);
  t.ok(ended, message, ended ? {} : { logs: apache.logs() });
}

/** How many logout tokens Apache took (200), from its access log; Apache writes a request's line after answering it, so a moment is allowed. */
async function deliveredTo(apache: OidcApache, expected: number): Promise<number> {
  const count = () => apache.accessLog().filter((l) => l === 'POST /protected/redirect_uri?logout=backchannel 200').length;
  for (let i = 0; i < 20 && count() < expected; i++) await new Promise((r) => setTimeout(r, 100));
  return count();
}

t.test('an operator ends sessions from the shell: each app the session signed in to hears it', async (t) => {
  const s = await provider(t, 'ada@example.com', 'bob@example.com', 'cy@example.com');
  const discovery = (await (await fetch(`${s.config.publicUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.equal(discovery.backchannel_logout_supported, true, 'discovery says back-channel logout is supported');
  t.equal(discovery.backchannel_logout_session_supported, true, 'with sid');
  const apache = await startOidcApache(t, s, { backchannel: true });
  const browser = await launch(t);

  const ada = await signInThrough(browser, apache, 'ada@example.com');
  const bob = await signInThrough(browser, apache, 'bob@example.com');
  const cy = await signInThrough(browser, apache, 'cy@example.com');
  t.equal(await signedInAs(apache, ada), 'ada@example.com', 'Apache serves her page');
  t.equal(await signedInAs(apache, bob), 'bob@example.com');
  t.equal(await signedInAs(apache, cy), 'cy@example.com');

  // revoke-sessions, from the shell against the same store: the running server delivers.
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  await ends(t, apache, ada, 'her Apache session ends');
  t.equal(await deliveredTo(apache, 1), 1, 'one logout token, accepted');
  t.equal(await signedInAs(apache, bob), 'bob@example.com', 'the others stay signed in');
  t.equal(await signedInAs(apache, cy), 'cy@example.com');
  const again = await ada.newPage();
  await again.goto(apache.page);
  t.match(new URL(again.url()).pathname, /^\/(signin|oidc\/interaction)/, 'her next visit is sent to sign in on Gatehouse');
  await fillSignin(again, 'ada@example.com');
  await again.waitForURL((u) => u.href.startsWith(apache.page), { timeout: 10_000 });
  t.equal(await signedInAs(apache, ada), 'ada@example.com', 'and after signing in again, Apache serves her again');

  // Disabling and deleting an account end its sessions the same way.
  t.equal((await cli(s.dataDir, ['user', 'disable', 'bob@example.com'])).code, 0);
  await ends(t, apache, bob, 'user disable: his Apache session ends');
  const cyId = (await cli(s.dataDir, ['--json', 'user', 'show', 'cy@example.com'])).json?.reference_id as string;
  const deleted = await s.call('DELETE', `/api/user_account/${cyId}`, { token: await s.signin('admin@example.com') });
  t.equal(deleted.status, 204, deleted.text);
  await ends(t, apache, cy, 'a deleted account: her Apache session ends');
  t.equal(await signedInAs(apache, ada), 'ada@example.com', 'ada is still signed in');
  t.same((await cli(s.dataDir, ['--json', 'deliveries'])).json?.deliveries, [], 'nothing pending or failed');
});

t.test("signing out on Gatehouse's pages ends the Apache session; an app's RP-initiated logout ends the other app's", async (t) => {
  const s = await provider(t, 'ada@example.com');
  const wiki = await startOidcApache(t, s, { backchannel: true });
  const browser = await launch(t);

  // Sign-out on Gatehouse's pages.
  const ada = await signInThrough(browser, wiki, 'ada@example.com');
  t.equal(await signedInAs(wiki, ada), 'ada@example.com');
  const page = await ada.newPage();
  await page.goto(`${s.config.publicUrl}/account`);
  await page.getByRole('button', { name: 'Sign out', exact: true }).first().click();
  await page.waitForURL((u) => u.pathname.startsWith('/signin'));
  await ends(t, wiki, ada, 'the Apache session ends with the Gatehouse session');

  // Two apps; the second signs out through Gatehouse's end-session endpoint (mod_auth_openidc's
  // ?logout=URL): the first hears it through the back-channel.
  const blog = await startOidcApache(t, s, { backchannel: true, postLogout: true });
  await signInThrough(browser, wiki, 'ada@example.com', ada);
  await signInThrough(browser, blog, 'ada@example.com', ada);
  t.equal(await signedInAs(wiki, ada), 'ada@example.com', 'signed in to both apps, with one Gatehouse sign-in');
  t.equal(await signedInAs(blog, ada), 'ada@example.com');
  await page.goto(`${blog.redirectUri}?logout=${encodeURIComponent(`${blog.url}/`)}`);
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await page.waitForURL(`${blog.url}/`, { timeout: 10_000 });
  t.equal(await signedInAs(blog, ada), null, 'the app that asked has ended its session');
  await ends(t, wiki, ada, 'the other app hears it through the back-channel');
  await page.goto(`${s.config.publicUrl}/account`);
  t.match(new URL(page.url()).pathname, /^\/signin/, 'and the Gatehouse session has ended');
});

t.test('an app on an internal address is not sent to unless the server allows it: refused when added, and the delivery fails with the reason', async (t) => {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}` });
  await s.signup('ada@example.com');
  const refused = await cli(s.dataDir, [
    'client',
    'add',
    '--name',
    'Wiki',
    '--redirect-uri',
    REDIRECT,
    '--backchannel-logout-uri',
    'http://localhost:9/logout',
  ]);
  t.not(refused.code, 0, 'client add refuses it, as webhook add does');
  t.match(refused.err, /loopback address[\s\S]*--webhook-allow-private loopback/);
  // Allowed by the shell that added it, not by the running server: the sender refuses it at every try.
  const added = await cli(s.dataDir, [
    '--webhook-allow-private',
    'loopback',
    '--json',
    'client',
    'add',
    '--name',
    'Wiki',
    '--first-party',
    '--redirect-uri',
    REDIRECT,
    '--backchannel-logout-uri',
    'http://localhost:9/logout',
  ]);
  t.equal(added.code, 0, added.err);
  const { code, verifier } = await authorizationCode(s.url, added.json.client_id, 'ada@example.com', PASSWORD);
  const tokens = await token(s.url, added.json, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT });
  t.equal(tokens.status, 200, 'she signed in to the app');
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  let listed: Array<{ topic: string; attempts: number; last_error: string | null }> = [];
  for (let i = 0; i < 100 && !listed.some((d) => d.attempts > 0); i++) {
    await new Promise((r) => setTimeout(r, 100));
    listed = (await cli(s.dataDir, ['--json', 'deliveries'])).json?.deliveries ?? [];
  }
  t.match(
    listed,
    [{ topic: 'backchannel_logout', attempts: 1, last_error: /refused: 127\.0\.0\.1 is a loopback address/ }],
    'tried once, refused, with the reason',
  );
});
