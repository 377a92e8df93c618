// An outside review's findings on step-up and recent sign-in. Each test failed before its fix.
//
// Finding 4: the recent-sign-in rule (--recent-signin) was checked at the step before a new way
// in was written (passkey options, TOTP's enrolment, a link begun on the account page), not at
// the write: with --recent-signin 1m, options at 0 s and the registration at 70 s succeeded. Now
// the step that stores the way in checks it again, with the session's sign-in read then.
//
// Finding 5: `client set --two-factor on` stopped the client's one-factor refresh tokens, but an
// access token already issued still got 200 from userinfo, and introspection called a token of
// an account outside the client's allowed groups active. Now the client's requirements as they
// stand (allowed groups, two factors against the level the token was issued at, the client
// itself) are held by one routine at every use: code exchange, refresh, userinfo, introspection.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt, type ManualClock } from '../helpers/clock';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { addClientFor, authorizationRequest, fillSignin, providerOn, reachApp, relyingParty, startApp } from '../helpers/oidc';
import { passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { countRows, errorCode, PASSWORD, startTestServer } from '../helpers/server';
import type { Caller } from '../../src/core';

const SEVENTY_SECONDS = 70_000;
const MFA = 'https://refeds.org/profile/mfa';
const SFA = 'https://refeds.org/profile/sfa';

const callerOf = (token: string): Caller => ({ token, client: '127.0.0.1', userAgent: null });

/**
 * The browser's half of adding a passkey, stopped before the registration is sent: the options
 * (with the password when given) and the authenticator's answer, from a fresh virtual authenticator.
 */
async function passkeyAnswer(browser: Browser, base: string, token: string, password?: string): Promise<{ status: number; response?: unknown }> {
  const a = await withAuthenticator(browser);
  await a.page.goto(`${base}/ping`);
  await a.page.addScriptTag({ url: '/assets/webauthn.js' });
  return a.page.evaluate(
    async ({ token, password }) => {
      const r = await fetch('/action/user_account/passkey_options', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ attributes: password ? { password } : {} }),
      });
      const body = (await r.json()) as Array<{ Attributes: { key?: string; value?: unknown } }>;
      if (r.status !== 200) return { status: r.status };
      const optionsJSON = body.find((i) => i.Attributes.key === 'passkey_options')!.Attributes.value;
      const W = (globalThis as unknown as { SimpleWebAuthnBrowser: { startRegistration(o: unknown): Promise<unknown> } }).SimpleWebAuthnBrowser;
      return { status: r.status, response: await W.startRegistration({ optionsJSON }) };
    },
    { token, password },
  );
}

t.test('finding 4: a passkey registered after the window is refused, though its options came within it', async (t) => {
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, { recentSignin: '1m' }, { clock });
  t.equal((await s.signup('ada@example.com')).status, 200);
  const ada = await s.signin('ada@example.com');
  const browser = await launch(t);
  const register = (response: unknown, name: string) => s.action('user_account', 'passkey_register', { response, name }, ada);

  // The review's case: options at 0 s (a sign-in 0 s old), the registration at 70 s.
  const late = await passkeyAnswer(browser, base, ada);
  t.equal(late.status, 200, 'options just after signing in');
  clock.advance(SEVENTY_SECONDS);
  const refused = await register(late.response, 'Late laptop');
  t.equal(refused.status, 403, 'the registration 70 s later is refused');
  t.equal(errorCode(refused), 'reauthentication_required');
  t.equal(await countRows(s, 'passkey'), 0, 'nothing stored');
  t.equal(
    await s
      .db('audit_event')
      .where({ event: 'passkey_added' })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    0,
    'nothing audited as added',
  );

  // A password entered again (the reauthenticate action), then the whole ceremony in time: stored.
  t.equal((await s.action('user_account', 'reauthenticate', { password: PASSWORD }, ada)).status, 200);
  const inTime = await passkeyAnswer(browser, base, ada);
  clock.advance(30_000);
  t.equal((await register(inTime.response, 'Laptop')).status, 200, 'registered 30 s after a password entered again');
  t.equal(await countRows(s, 'passkey'), 1);

  // The password given with the options (a stale session) counts from when it was entered: the
  // registration that follows within the window passes, one after it does not.
  clock.advance(11 * 60 * 1000);
  const withPassword = await passkeyAnswer(browser, base, ada, PASSWORD);
  t.equal(withPassword.status, 200, 'a stale session gets options with the password');
  clock.advance(30_000);
  t.equal((await register(withPassword.response, 'Phone')).status, 200, 'registered 30 s after the password');
  const again = await passkeyAnswer(browser, base, ada, PASSWORD);
  clock.advance(SEVENTY_SECONDS);
  t.equal(errorCode(await register(again.response, 'Tablet')), 'reauthentication_required', 'registered 70 s after the password: refused');
  t.equal(await countRows(s, 'passkey'), 2);
});

t.test('finding 4: TOTP is turned on only within the window, by the request that turns it on', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, { recentSignin: '1m' }, undefined, { clock });
  t.equal((await s.signup('admin@example.com')).status, 200);
  await s.core.accounts.create(s.core.shell, { email: 'ada@example.com', password: PASSWORD });
  const ada = await s.signin('ada@example.com');
  const account = () => s.db('user_account').where({ email: 'ada@example.com' }).first();

  const enrolled = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, ada);
  t.equal(enrolled.status, 200, 'enrolment just after signing in');
  const secret: string = enrolled.body[0].Attributes.secret;
  clock.advance(SEVENTY_SECONDS);
  const late = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, ada);
  t.equal(late.status, 403, 'the confirming code 70 s later is refused');
  t.equal(errorCode(late), 'reauthentication_required');
  t.notOk((await account()).totp_enabled, 'TOTP stays off');
  t.equal(await countRows(s, 'recovery_code'), 0, 'no recovery codes made');

  t.equal((await s.action('user_account', 'reauthenticate', { password: PASSWORD }, ada)).status, 200);
  clock.advance(30_000);
  const confirmed = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, ada);
  t.equal(confirmed.status, 200, 'the same enrolment, confirmed within the window of a password entered again');
  t.ok((await account()).totp_enabled, 'TOTP is on');

  // The password an enrolment takes is a password entered again: a stale session enrols and confirms.
  await s.core.accounts.create(s.core.shell, { email: 'bob@example.com', password: PASSWORD });
  const bob = await s.signin('bob@example.com');
  clock.advance(11 * 60 * 1000);
  const bobs = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, bob);
  t.equal(bobs.status, 200, 'a stale session enrols with the password');
  clock.advance(30_000);
  t.equal(
    (await s.action('user_account', 'totp_confirm', { otp: await totpAt(bobs.body[0].Attributes.secret, clock) }, bob)).status,
    200,
    'and confirms within its window',
  );
});

/** Ada's session, about to link Corp's account to hers: the provider's answer, not yet given to Gatehouse. */
async function linking(t: Parameters<typeof startTestServer>[0], clock: ManualClock) {
  const s = await startTestServer(t, { recentSignin: '1m' }, undefined, { clock });
  t.equal((await s.signup('admin@example.com')).status, 200);
  await s.core.accounts.create(s.core.shell, { email: 'ada@example.com', password: PASSWORD });
  const up = await startHostileUpstream(t, 'c');
  up.sub = 'ada-at-corp';
  up.email = 'ada@corp.example';
  const added = await cli(s.dataDir, ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'c', '--client-secret-env', 'S'], {
    env: { S: 'x' },
  });
  t.equal(added.code, 0, added.err);
  const token = await s.signin('ada@example.com');
  /** Begins a link and lets the provider answer: the callback address the browser would bring back. */
  const throughProvider = async () => {
    const to = await s.core.providers.begin(callerOf(token), 'corp', { purpose: 'link', binding: 'b', carry: {} });
    const back = await fetch(to, { redirect: 'manual' });
    return new URL(back.headers.get('location')!);
  };
  const finish = (callback: URL) => s.core.providers.finish(callerOf(token), 'corp', callback, 'b');
  return { s, token, throughProvider, finish };
}

t.test('finding 4: a link whose provider answers after the window is refused, though it began within it', async (t) => {
  const clock = manualClock();
  const { s, token, throughProvider, finish } = await linking(t, clock);

  const callback = await throughProvider();
  clock.advance(SEVENTY_SECONDS);
  await t.rejects(finish(callback), { code: 'reauthentication_required' }, 'the callback 70 s later links nothing');
  t.equal(await countRows(s, 'linked_identity'), 0, 'nothing linked');

  t.equal((await s.action('user_account', 'reauthenticate', { password: PASSWORD }, token)).status, 200);
  const inTime = await throughProvider();
  clock.advance(30_000);
  t.match(await finish(inTime), { kind: 'linked' }, 'linked within the window of a password entered again');
  t.equal(await countRows(s, 'linked_identity'), 1);
  t.ok(await s.db('audit_event').where({ event: 'identity_linked' }).first(), 'audited');
});

t.test('finding 4: the page of a late callback sends the person to confirm it is them', async (t) => {
  const clock = manualClock();
  const { s, throughProvider } = await linking(t, clock);
  const callback = await throughProvider();
  clock.advance(SEVENTY_SECONDS);
  // The browser brings back the flow cookie the link was bound to ('b').
  const page = await fetch(`${s.url}${callback.pathname}${callback.search}`, { redirect: 'manual', headers: { cookie: 'gatehouse_flow=b' } });
  t.equal(page.status, 303);
  t.match(page.headers.get('location'), /^\/signin\/confirm\?return=%2Faccount/, 'to "Confirm it is you", then back to the account page');
  t.equal(await countRows(s, 'linked_identity'), 0);
});

/** A provider with a confidential first-party client (offline_access) of a real app, and its people signing in in Chromium. */
async function provider(t: Parameters<typeof startTestServer>[0]) {
  const clock = manualClock();
  const s = await providerOn(t, { clock }, 'ada@example.com', 'tom@example.com');
  const app = await startApp(t);
  const browser = await launch(t);
  const registered = await addClientFor(s, app.redirect, '--first-party');
  const config = await relyingParty(s, registered);
  /** Signs `email` in through the client (with a TOTP code when given), answering its tokens. */
  const signIn = async (email: string, code?: () => Promise<string>) => {
    const flow = await authorizationRequest(config, 'openid offline_access', 'st', { redirect_uri: app.redirect });
    const page = await (await browser.newContext()).newPage();
    await page.goto(flow.url.href);
    await fillSignin(page, email);
    if (code) {
      await page.getByLabel('Authentication code').fill(await code());
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    }
    await reachApp(page);
    return oidc.authorizationCodeGrant(config, app.last()!, { pkceCodeVerifier: flow.verifier, expectedState: 'st' });
  };
  return { s, clock, config, registered, signIn };
}

/** What userinfo answers an access token: 200, or its status and the Bearer challenge's error. */
async function userinfo(config: oidc.Configuration, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers) {
  try {
    await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    return 'ok';
  } catch (err) {
    const e = err as { status?: number; cause?: Array<{ scheme: string; parameters: { error?: string } }> };
    return `${e.status} ${e.cause?.[0]?.parameters.error}`;
  }
}

/** What a refresh answers: ok, or the OAuth error. */
const refresh = (config: oidc.Configuration, refreshToken: string) =>
  oidc.refreshTokenGrant(config, refreshToken).then(
    () => 'ok',
    (err: { error?: string }) => err.error ?? String(err),
  );

t.test("finding 5: a client switched to two factors stops a one-factor grant's access token at userinfo and introspection, as at refresh", async (t) => {
  const { s, clock, config, registered, signIn } = await provider(t);
  // Tom has TOTP and signs in with his code (two factors); Ada with her password (one).
  const tom = await s.signin('tom@example.com');
  const secret = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, tom)).body[0].Attributes.secret as string;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, tom)).status, 200);
  clock.advance(30_000);
  const toms = await signIn('tom@example.com', () => totpAt(secret, clock));
  const adas = await signIn('ada@example.com');
  t.equal(toms.claims()!.acr, MFA);
  t.equal(adas.claims()!.acr, SFA);
  for (const [who, tokens] of [
    ['Ada', adas],
    ['Tom', toms],
  ] as const) {
    t.equal(await userinfo(config, tokens), 'ok', `${who}: userinfo while the client takes one factor`);
    const seen = await oidc.tokenIntrospection(config, tokens.access_token);
    t.equal(seen.active, true, `${who}: introspection says active`);
    t.equal(seen.acr, who === 'Ada' ? SFA : MFA, `${who}: and at which level the token was issued`);
  }

  t.equal((await cli(s.dataDir, ['client', 'set', registered.client_id, '--two-factor', 'on'])).code, 0);
  t.equal(await userinfo(config, adas), '401 invalid_token', "Ada's access token: userinfo answers 401 invalid_token");
  t.equal((await oidc.tokenIntrospection(config, adas.access_token)).active, false, "Ada's access token: introspection says inactive");
  t.equal((await oidc.tokenIntrospection(config, adas.refresh_token!)).active, false, "Ada's refresh token: introspection says inactive");
  t.equal(await refresh(config, adas.refresh_token!), 'invalid_grant', "Ada's refresh token: refused, as before");

  t.equal(await userinfo(config, toms), 'ok', "Tom's two-factor access token still answers");
  t.equal((await oidc.tokenIntrospection(config, toms.access_token)).active, true, 'and is active');
  t.equal(await refresh(config, toms.refresh_token!), 'ok', 'and his refresh token refreshes');
});

t.test('finding 5: leaving an allowed group, or the client removed, ends every use of its tokens, introspection too', async (t) => {
  const { s, config, registered, signIn } = await provider(t);
  t.equal((await cli(s.dataDir, ['group', 'create', 'editors'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add', 'editors', 'ada@example.com'])).code, 0);
  // Ada signs in to the ungated client, and to one gated on `editors` (`client add --allowed-group`).
  const adas = await signIn('ada@example.com');
  t.equal((await oidc.tokenIntrospection(config, adas.access_token)).active, true);
  const gatedApp = await startApp(t);
  const gatedClient = await addClientFor(s, gatedApp.redirect, '--first-party', '--allowed-group', 'editors');
  const gatedConfig = await relyingParty(s, gatedClient);
  const browser = await launch(t);
  const flow = await authorizationRequest(gatedConfig, 'openid offline_access', 'st', { redirect_uri: gatedApp.redirect });
  const page = await (await browser.newContext()).newPage();
  await page.goto(flow.url.href);
  await fillSignin(page, 'ada@example.com');
  await reachApp(page);
  const tokens = await oidc.authorizationCodeGrant(gatedConfig, gatedApp.last()!, { pkceCodeVerifier: flow.verifier, expectedState: 'st' });
  t.equal((await oidc.tokenIntrospection(gatedConfig, tokens.access_token)).active, true, 'active while she is an editor');

  t.equal((await cli(s.dataDir, ['group', 'remove', 'editors', 'ada@example.com'])).code, 0);
  t.equal((await oidc.tokenIntrospection(gatedConfig, tokens.access_token)).active, false, 'access token: inactive once she left the group');
  t.equal((await oidc.tokenIntrospection(gatedConfig, tokens.refresh_token!)).active, false, 'refresh token: inactive');
  t.equal(await userinfo(gatedConfig, tokens), '401 invalid_token', 'userinfo: 401 invalid_token');
  t.equal(await refresh(gatedConfig, tokens.refresh_token!), 'invalid_grant', 'refresh: invalid_grant');
  t.equal((await oidc.tokenIntrospection(config, adas.access_token)).active, true, 'the ungated client’s token is untouched');

  t.equal((await cli(s.dataDir, ['client', 'remove', registered.client_id])).code, 0);
  t.equal(await userinfo(config, adas), '401 invalid_token', 'a removed client’s access token: 401 invalid_token');
});
