// "Sign in with Gatehouse": a relying party nobody here wrote (openid-client) runs the code flow
// with PKCE against the real provider, with the browser half in Debian Chromium through
// Gatehouse's own sign-in and consent pages.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { generate } from 'otplib';
import { PASSWORD, setSignup, startTestServer } from '../helpers/server';
import { addClient, APP, authorizationRequest, providerWith, REDIRECT, relyingParty } from '../helpers/oidc';

async function setUp(t: Parameters<typeof startTestServer>[0]) {
  const s = await providerWith(t, 'ada@example.com');
  const browser = await launch(t);
  return { s, browser };
}

/** Drives the browser from the authorization URL to the app's callback; returns the callback URL. */
async function authorize(browser: Browser, url: URL, email: string, o: { consent?: boolean; shots?: string } = {}): Promise<URL> {
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback: URL | undefined;
  await page.route(`${APP}/**`, (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
  });
  await page.goto(url.href);
  if (new URL(page.url()).pathname.startsWith('/oidc/interaction/')) {
    if (o.shots) await screenshots(page, `${o.shots}-signin`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }
  if (o.consent) {
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    if (o.shots) await screenshots(page, `${o.shots}-consent`);
    await page.getByRole('button', { name: 'Allow' }).click();
  }
  await page.waitForURL(`${APP}/**`, { timeout: 5000 }).catch(async (err) => {
    throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.slice(0, 300)}`);
  });
  await context.close();
  return callback!;
}

t.test('code flow with PKCE: ID token, userinfo, refresh (openid-client, Chromium)', async (t) => {
  const { s, browser } = await setUp(t);
  await cli(s.dataDir, ['group', 'create', 'editors']);
  await cli(s.dataDir, ['group', 'add', 'editors', 'ada@example.com']);
  const registered = await addClient(s);
  t.type(registered.client_secret, 'string', 'a confidential client gets its secret once');

  const config = await relyingParty(s, registered);
  t.equal(config.serverMetadata().issuer, s.config.publicUrl, 'issuer = the public URL');
  t.match(config.serverMetadata().authorization_endpoint, /\/oidc\/auth$/);
  t.same(config.serverMetadata().code_challenge_methods_supported, ['S256']);

  const state = oidc.randomState();
  const { url, verifier } = await authorizationRequest(config, 'openid email profile groups offline_access', state);
  const callback = await authorize(browser, url, 'ada@example.com', { consent: true, shots: 'oidc' });
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
  const claims = tokens.claims()!;
  const ada = (await cli(s.dataDir, ['--json', 'user', 'show', 'ada@example.com'])).json;
  t.equal(claims.sub, ada.reference_id, 'sub is the reference_id');
  t.equal(claims.iss, s.config.publicUrl);
  t.same(claims.amr, ['pwd'], 'amr: a password sign-in');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  t.match(info, { sub: ada.reference_id, email: 'ada@example.com', email_verified: false, name: 'ada', preferred_username: 'ada' });
  t.same((info.groups as string[]).sort(), ['editors', 'users'], 'group names, the dedicated group left out');
  t.type(tokens.refresh_token, 'string', 'offline_access gives a refresh token');

  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.type(refreshed.access_token, 'string');
  t.not(refreshed.refresh_token, tokens.refresh_token, 'refresh tokens rotate');
  // Consent is asked once per client and scope set: a later sign-in, in another browser, is not asked.
  const { url: url2, verifier: again } = await authorizationRequest(config, 'openid email profile groups', state);
  const second = await authorize(browser, url2, 'ada@example.com');
  t.type(
    (await oidc.authorizationCodeGrant(config, second, { pkceCodeVerifier: again, expectedState: state })).access_token,
    'string',
    'no consent page the second time',
  );

  await t.rejects(
    oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    'a code used twice is refused (and its grant revoked)',
  );

  // user revoke-sessions (an auth_version bump) ends the provider's refresh tokens too.
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  await t.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token!), 'refresh after revoke-sessions is refused');
});

t.test('public clients need PKCE; unregistered redirect URIs never leave Gatehouse; allowed groups', async (t) => {
  const { s, browser } = await setUp(t);
  const pub = await addClient(s, '--public', '--first-party');
  t.equal(pub.client_secret, undefined, 'a public client has no secret');
  const base = `${s.config.publicUrl}/oidc/auth?client_id=${pub.client_id}&response_type=code&scope=openid`;

  const page = await browser.newPage();
  await page.goto(`${base}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`);
  t.equal(new URL(page.url()).host, new URL(s.config.publicUrl).host, 'an unregistered redirect_uri: the error shows at Gatehouse');
  t.match(await page.locator('main').textContent(), /redirect_uri/);

  const noPkce = await fetch(`${base}&redirect_uri=${encodeURIComponent(REDIRECT)}&state=x`, { redirect: 'manual' });
  t.equal(noPkce.status, 303);
  t.match(noPkce.headers.get('location'), /error=invalid_request/);
  t.match(decodeURIComponent(noPkce.headers.get('location')!), /PKCE/);

  // First party: no consent page. Allowed groups: only editors sign in to this one.
  await cli(s.dataDir, ['group', 'create', 'editors']);
  const restricted = await addClient(s, '--public', '--first-party', '--allowed-group', 'editors');
  const config = await relyingParty(s, restricted);
  const start = () => authorizationRequest(config);
  const refused = await authorize(browser, (await start()).url, 'ada@example.com');
  t.equal(refused.searchParams.get('error'), 'access_denied', 'a non-member ends at the client with access_denied');
  await cli(s.dataDir, ['group', 'add', 'editors', 'ada@example.com']);
  const { url, verifier } = await start();
  const ok = await authorize(browser, url, 'ada@example.com');
  const tokens = await oidc.authorizationCodeGrant(config, ok, { pkceCodeVerifier: verifier, expectedState: 'st' });
  t.type(tokens.claims()?.sub, 'string', 'a member signs in, with no consent page');
});

t.test('every account rule holds: the TOTP step, lockouts, disabling; two instances share the flow', async (t) => {
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const port = await freePort();
  const flags = { port, publicUrl: `http://127.0.0.1:${port}` };
  const s = await startTestServer(t, flags, undefined, { clock });
  // A second instance on the same store, behind the same public URL (a load balancer's job).
  const other = await startTestServer(t, { publicUrl: flags.publicUrl }, s.dataDir, { clock });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('tom@example.com');
  await s.signup('lou@example.com');
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party');
  // The relying party talks to the second instance for everything but the browser's half.
  const config = await relyingParty(s, registered);
  config[oidc.customFetch] = (url, options) => fetch(url.replace(s.config.publicUrl, other.url), options as RequestInit);
  const start = (scope = 'openid') => authorizationRequest(config, scope);

  // TOTP: the password alone does not give a code.
  const tom = await s.signin('tom@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, tom);
  const secret = enrol.body[0].Attributes.secret as string;
  const step = Math.floor(clock.now() / 30000);
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await generate({ secret, epoch: step * 30 }) }, tom)).status, 200);
  clock.advance(30_000);
  const flow = await start('openid offline_access');
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback: URL | undefined;
  await page.route(`${APP}/**`, (route) => ((callback = new URL(route.request().url())), route.fulfill({ status: 200, body: 'app' })));
  await page.goto(flow.url.href);
  await page.getByLabel('Email', { exact: true }).fill('tom@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByLabel('Authentication code').waitFor();
  t.equal(await page.getByRole('alert').count(), 0, 'the code step comes first, with no error');
  t.equal(callback, undefined, 'no code yet');
  await page.getByLabel('Authentication code').fill(await generate({ secret, epoch: (step + 1) * 30 }));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${APP}/**`);
  const tokens = await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: flow.verifier, expectedState: 'st' });
  t.type(tokens.refresh_token, 'string', 'the code from the first instance is redeemed on the second');
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.type(refreshed.access_token, 'string');
  t.equal((await oidc.tokenIntrospection(config, refreshed.access_token)).active, true, 'introspection: active');
  await oidc.tokenRevocation(config, refreshed.access_token);
  t.equal((await oidc.tokenIntrospection(config, refreshed.access_token)).active, false, 'revoked: inactive');
  // Disabling the account ends its provider grants at once.
  t.equal((await cli(s.dataDir, ['user', 'disable', 'tom@example.com'])).code, 0);
  await t.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token!), 'a disabled account’s refresh token is refused');
  await context.close();

  // A locked-out account cannot get a code.
  for (let i = 0; i < 10; i++) await s.action('user_account', 'signin', { email: 'lou@example.com', password: 'wrong password 123' });
  const locked = await browser.newPage();
  let reached = false;
  await locked.route(`${APP}/**`, (route) => ((reached = true), route.fulfill({ status: 200, body: 'app' })));
  await locked.goto((await start()).url.href);
  await locked.getByLabel('Email', { exact: true }).fill('lou@example.com');
  await locked.getByLabel('Password').fill(PASSWORD);
  await locked.getByRole('button', { name: 'Sign in', exact: true }).click();
  t.match(await locked.getByRole('alert').textContent(), /try again|locked|too many/i, 'the lockout shows');
  t.notOk(reached, 'and the application got nothing');
});

t.test('clients from the shell: list, show, rotate-secret, remove', async (t) => {
  const { s } = await setUp(t);
  const added = await addClient(s, '--post-logout-redirect-uri', `${APP}/bye`);
  const listed = await cli(s.dataDir, ['--json', 'client', 'list']);
  t.match(listed.json.clients, [{ client_id: added.client_id, name: 'Wiki', public: false, first_party: false, redirect_uris: [REDIRECT] }]);
  t.notMatch(JSON.stringify(listed.json), new RegExp(added.client_secret!), 'the secret is never shown again');
  t.match((await cli(s.dataDir, ['client', 'list'])).out, /^CLIENT_ID\s+NAME\s+TYPE/);
  const shown = await cli(s.dataDir, ['--json', 'client', 'show', added.client_id]);
  t.same(shown.json.post_logout_redirect_uris, [`${APP}/bye`]);
  const token = (secret: string) =>
    fetch(`${s.url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${added.client_id}:${secret}`).toString('base64')}`,
      },
      body: 'grant_type=authorization_code&code=nope&redirect_uri=' + encodeURIComponent(REDIRECT),
    }).then(async (r) => ((await r.json()) as { error: string }).error);
  t.equal(await token(added.client_secret!), 'invalid_grant', 'the client authenticates (the code is bad)');
  const rotated = await cli(s.dataDir, ['--json', 'client', 'rotate-secret', added.client_id]);
  t.equal(rotated.code, 0);
  t.equal(await token(added.client_secret!), 'invalid_client', 'the old secret stops working at once');
  t.equal(await token(rotated.json.client_secret), 'invalid_grant', 'the new one works');
  t.equal((await cli(s.dataDir, ['client', 'remove', added.client_id])).code, 0);
  t.equal(await token(rotated.json.client_secret), 'invalid_client', 'a removed client is gone on the next request');
  t.equal((await cli(s.dataDir, ['client', 'show', added.client_id])).code, 4);
  for (const bad of [
    ['--redirect-uri', 'http://app.example.com/cb'],
    ['--redirect-uri', 'https://app.example.com/cb#x'],
    ['--redirect-uri', 'nope'],
  ]) {
    t.equal((await cli(s.dataDir, ['client', 'add', '--name', 'X', ...bad])).code, 2, bad.join(' '));
  }
  t.equal((await cli(s.dataDir, ['client', 'add', '--name', 'X', '--redirect-uri', REDIRECT, '--allowed-group', 'nosuch'])).code, 4);
  const events = ((await cli(s.dataDir, ['--json', 'audit'])).json.events as Array<{ event: string }>).map((e) => e.event);
  for (const e of ['client_added', 'client_secret_rotated', 'client_removed']) t.ok(events.includes(e), e);
});

t.test('RP-initiated logout ends the provider session and the pages’ session', async (t) => {
  const { s, browser } = await setUp(t);
  const registered = await addClient(s, '--first-party', '--post-logout-redirect-uri', `${APP}/bye`);
  const config = await relyingParty(s, registered);
  const { url, verifier } = await authorizationRequest(config);
  const context = await browser.newContext();
  const page = await context.newPage();
  let last: URL | undefined;
  await page.route(`${APP}/**`, (route) => ((last = new URL(route.request().url())), route.fulfill({ status: 200, body: 'app' })));
  await page.goto(url.href);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${APP}/**`);
  const tokens = await oidc.authorizationCodeGrant(config, last!, { pkceCodeVerifier: verifier, expectedState: 'st' });

  await page.goto(oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: `${APP}/bye`, state: 'b' }).href);
  await screenshots(page, 'oidc-logout');
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await page.waitForURL(`${APP}/**`);
  t.equal(last!.pathname, '/bye', 'back at the application');
  t.equal(last!.searchParams.get('state'), 'b');
  await page.goto(`${s.url}/account`);
  t.match(page.url(), /\/signin$/, 'the pages are signed out too');
  await page.goto(url.href);
  t.match(new URL(page.url()).pathname, /^\/oidc\/interaction\//, 'the next sign-in asks for the password again');
  await context.close();
});
