// An outside attack: a client that is not first party asked, with scope=openid, for email, groups,
// name and preferred_username by name (the `claims` parameter); the consent page listed only the
// scopes, yet after Allow its ID token and userinfo carried them all. Now the consent page lists
// the claims asked by name, in words, and a claim is given only when the request's scopes allow
// it (the page showed it); the others are refused, said so on the page, and no token carries them.
// openid-client is the relying party; Chromium walks the pages.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { addClient, APP, authorizationRequest, providerWith, relyingParty } from '../helpers/oidc';
import { PASSWORD } from '../helpers/server';

const PERSON = ['email', 'email_verified', 'name', 'preferred_username', 'groups'];
const personal = (claims: Record<string, unknown>) =>
  Object.keys(claims)
    .filter((k) => PERSON.includes(k))
    .sort();

/** From the authorization URL, signed in, to the consent page: its text (and screenshots), then Allow, then the callback. */
async function consent(browser: Browser, url: URL, shots: string): Promise<{ text: string; callback: URL }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback: URL | undefined;
  await page.route(`${APP}/**`, (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
  });
  await page.goto(url.href);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  const text = ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ');
  await screenshots(page, shots);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${APP}/**`, { timeout: 5000 });
  await context.close();
  return { text, callback: callback! };
}

t.test('claims asked by name: shown on the consent page, given only when the scopes allow them', async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  t.equal((await cli(s.dataDir, ['group', 'create', 'editors'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add', 'editors', 'ada@example.com'])).code, 0);
  const browser = await launch(t);
  const client = await addClient(s);
  const config = await relyingParty(s, client);
  const claims = JSON.stringify({
    id_token: { email: null, groups: null, name: null, preferred_username: null },
    userinfo: { email: null, groups: null },
  });

  // scope=openid alone: every claim asked is more than the scopes allow.
  const first = await authorizationRequest(config, 'openid', 'st', { claims });
  const shown = await consent(browser, first.url, 'oidc-consent-claims-refused');
  t.match(shown.text, /know who you are on this server/, 'the scope, in words');
  t.notMatch(shown.text, /By name, it asks for/, 'nothing listed as given');
  t.match(shown.text, /It also asked for .*your email address.*, which it will not get/, 'the refused claims, said so');
  for (const words of ['your email address', 'the names of your groups', 'your name', 'your username']) t.match(shown.text, words, `named: ${words}`);
  const tokens = await oidc.authorizationCodeGrant(config, shown.callback, { pkceCodeVerifier: first.verifier, expectedState: 'st' });
  const idToken = tokens.claims()!;
  t.same(personal(idToken), [], 'the ID token carries none of them');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub);
  t.same(personal(info), [], 'nor does userinfo');

  // With the email and groups scopes: email and groups are shown by name and given in the ID
  // token; name and preferred_username (profile, not asked) are refused.
  const second = await authorizationRequest(config, 'openid email groups', 'st2', { claims });
  const asked = await consent(browser, second.url, 'oidc-consent-claims');
  t.match(asked.text, /By name, it asks for: ?your email address ?the names of your groups/, 'the claims its scopes allow, by name');
  t.match(asked.text, /It also asked for your name and your username, which it will not get/, 'the others refused');
  const more = await oidc.authorizationCodeGrant(config, asked.callback, { pkceCodeVerifier: second.verifier, expectedState: 'st2' });
  const id2 = more.claims()!;
  t.same(personal(id2), ['email', 'groups'], 'the ID token: what was shown and allowed');
  t.equal(id2.email, 'ada@example.com');
  const info2 = await oidc.fetchUserInfo(config, more.access_token, id2.sub);
  t.same(personal(info2), ['email', 'email_verified', 'groups'], 'userinfo: what the granted scopes allow, nothing of profile');

  // Later asked with profile: the claims refused before are given now that their scope is.
  const third = await authorizationRequest(config, 'openid email groups profile', 'st3', { claims });
  const all = await consent(browser, third.url, 'oidc-consent-claims-profile');
  t.match(all.text, /your name ?your username/, 'now shown');
  t.notMatch(all.text, /which it will not get/);
  const last = await oidc.authorizationCodeGrant(config, all.callback, { pkceCodeVerifier: third.verifier, expectedState: 'st3' });
  t.same(personal(last.claims()!), ['email', 'groups', 'name', 'preferred_username'], 'the ID token carries them');
  const info3 = await oidc.fetchUserInfo(config, last.access_token, last.claims()!.sub);
  t.same(personal(info3), PERSON.slice().sort(), 'userinfo carries every claim of the granted scopes');
});
