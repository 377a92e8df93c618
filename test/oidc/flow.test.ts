// "Sign in with Gatehouse": a relying party nobody here wrote (openid-client) runs the code flow
// with PKCE against the real provider, with the browser half in Debian Chromium through
// Gatehouse's own sign-in and consent pages.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';

const APP = 'http://localhost:3999';
const REDIRECT = `${APP}/callback`;

async function setUp(t: Parameters<typeof startTestServer>[0]) {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}` });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('ada@example.com');
  const browser = await launch(t);
  return { s, browser };
}

async function addClient(s: TestServer, ...args: string[]) {
  const r = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, ...args]);
  if (r.code !== 0) throw new Error(r.err);
  return r.json as { client_id: string; client_secret?: string };
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
    await page.getByRole('button', { name: 'Sign in' }).click();
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

  const config = await oidc.discovery(new URL(s.config.publicUrl), registered.client_id, registered.client_secret, undefined, {
    execute: [oidc.allowInsecureRequests],
  });
  t.equal(config.serverMetadata().issuer, s.config.publicUrl, 'issuer = the public URL');
  t.match(config.serverMetadata().authorization_endpoint, /\/oidc\/auth$/);
  t.same(config.serverMetadata().code_challenge_methods_supported, ['S256']);

  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email profile groups offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    prompt: 'consent',
  });
  const callback = await authorize(browser, url, 'ada@example.com', { consent: true, shots: 'oidc' });
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
  const claims = tokens.claims()!;
  const ada = (await cli(s.dataDir, ['--json', 'user', 'show', 'ada@example.com'])).json;
  t.equal(claims.sub, ada.reference_id, 'sub is the reference_id');
  t.equal(claims.iss, s.config.publicUrl);
  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  t.match(info, { sub: ada.reference_id, email: 'ada@example.com', email_verified: false, name: 'ada' });
  t.same((info.groups as string[]).sort(), ['editors', 'users'], 'group names, the dedicated group left out');
  t.type(tokens.refresh_token, 'string', 'offline_access gives a refresh token');

  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.type(refreshed.access_token, 'string');
  t.not(refreshed.refresh_token, tokens.refresh_token, 'refresh tokens rotate');
  await t.rejects(oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }), 'a code used twice is refused');

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
  const config = await oidc.discovery(new URL(s.config.publicUrl), restricted.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const start = async () => {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'st',
    });
    return { url, verifier };
  };
  const refused = await authorize(browser, (await start()).url, 'ada@example.com');
  t.equal(refused.searchParams.get('error'), 'access_denied', 'a non-member ends at the client with access_denied');
  await cli(s.dataDir, ['group', 'add', 'editors', 'ada@example.com']);
  const { url, verifier } = await start();
  const ok = await authorize(browser, url, 'ada@example.com');
  const tokens = await oidc.authorizationCodeGrant(config, ok, { pkceCodeVerifier: verifier, expectedState: 'st' });
  t.type(tokens.claims()?.sub, 'string', 'a member signs in, with no consent page');
});
