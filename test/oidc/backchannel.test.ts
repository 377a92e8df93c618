// How someone signed in, and logout that reaches every app: ID tokens say amr, acr, auth_time and
// sid (openid-client); a session that ends, however it ends, sends each client it signed in to a
// logout token through the delivery queue, checked with jose as an app would; step-up for a client
// or a request that wants two factors.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import * as jose from 'jose';
import type { Browser } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';
import { addClient, APP, authorizationRequest, relyingParty } from '../helpers/oidc';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const MFA = 'https://refeds.org/profile/mfa';
const SFA = 'https://refeds.org/profile/sfa';

/** An app's back-channel logout endpoint: keeps each logout_token it is sent, answers the statuses given (200 once they run out). */
async function logoutReceiver(t: Parameters<typeof startTestServer>[0]) {
  const tokens: string[] = [];
  const answers: number[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      if (status === 200) tokens.push(new URLSearchParams(body).get('logout_token') ?? '');
      res.writeHead(status, { 'cache-control': 'no-store' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://localhost:${(server.address() as AddressInfo).port}/backchannel-logout`;
  return {
    url,
    tokens,
    answers,
    async next(n: number, timeoutMs = 15_000): Promise<string> {
      const until = Date.now() + timeoutMs;
      while (tokens.length < n) {
        if (Date.now() > until) throw new Error(`no logout token #${n} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return tokens[n - 1];
    },
  };
}

async function provider(t: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}`, webhookAllowPrivate: ['loopback'] });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('ada@example.com');
  return s;
}

/** The browser's half: to the app's callback (signing in when asked), or wherever the interaction stops. */
async function authorize(browser: Browser, url: URL, email: string, o: { shots?: string; context?: Awaited<ReturnType<Browser['newContext']>> } = {}) {
  const context = o.context ?? (await browser.newContext());
  const page = await context.newPage();
  let callback: URL | undefined;
  await page.route(`${APP}/**`, (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
  });
  await page.goto(url.href);
  if (new URL(page.url()).pathname.startsWith('/oidc/interaction/') && (await page.getByLabel('Password').count()) > 0) {
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }
  // Until the app has its answer, or Gatehouse asks for more (to confirm, or a page saying why not).
  const until = Date.now() + 5000;
  for (;;) {
    if (callback) break;
    const path = new URL(page.url()).pathname;
    if (path.startsWith('/signin/confirm')) break;
    if (path.includes('/oidc/interaction/') && (await page.getByRole('button', { name: /Back to/ }).count()) > 0) break;
    if (Date.now() > until) throw new Error(`stuck at ${page.url()}: ${(await page.locator('body').textContent())?.replace(/\s+/g, ' ').slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  await page.waitForLoadState();
  if (o.shots && !callback) await screenshots(page, o.shots);
  return { callback, page, context };
}

async function verifyLogout(s: TestServer, token: string, clientId: string) {
  const jwks = jose.createRemoteJWKSet(new URL(`${s.config.publicUrl}/oidc/jwks`));
  const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, { issuer: s.config.publicUrl, audience: clientId, typ: 'logout+jwt' });
  return { payload, protectedHeader };
}

t.test('discovery says what is supported', async (t) => {
  const s = await provider(t);
  const meta = (await s.call('GET', '/.well-known/openid-configuration')).body;
  t.equal(meta.backchannel_logout_supported, true);
  t.equal(meta.backchannel_logout_session_supported, true);
  t.same(meta.acr_values_supported, [MFA, SFA]);
  t.equal(meta.claims_parameter_supported, true);
  t.ok(meta.claims_supported.includes('acr') && meta.claims_supported.includes('amr'));
});

t.test('ID tokens say amr, acr, auth_time and sid; revoke-sessions sends one logout token, checked with jose', async (t) => {
  const s = await provider(t);
  // A second instance on the same store sends too: the message still leaves once.
  await startTestServer(t, { publicUrl: s.config.publicUrl, webhookAllowPrivate: ['loopback'] }, s.dataDir);
  const rp = await logoutReceiver(t);
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party', '--webhook-allow-private', 'loopback', '--backchannel-logout-uri', rp.url);
  const shown = (await cli(s.dataDir, ['--json', 'client', 'show', registered.client_id])).json;
  t.equal(shown.backchannel_logout_uri, rp.url, 'client show says where logouts go');
  const config = await relyingParty(s, registered);
  const { url, verifier } = await authorizationRequest(config);
  const before = Math.floor(Date.now() / 1000);
  const { callback } = await authorize(browser, url, 'ada@example.com');
  const tokens = await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  const claims = tokens.claims()!;
  t.same(claims.amr, ['pwd']);
  t.equal(claims.acr, SFA, 'one factor: REFEDS SFA');
  t.ok(typeof claims.auth_time === 'number' && claims.auth_time >= before - 1, 'auth_time: when she signed in');
  t.type(claims.sid, 'string', 'sid names the session');

  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  const { payload, protectedHeader } = await verifyLogout(s, await rp.next(1), registered.client_id);
  t.equal(protectedHeader.typ, 'logout+jwt');
  t.equal(payload.sub, claims.sub);
  t.equal(payload.sid, claims.sid, 'the same session as the ID token');
  t.same(payload.events, { [LOGOUT_EVENT]: {} });
  t.equal(payload.nonce, undefined, 'a logout token never has a nonce');
  t.type(payload.jti, 'string');
  t.ok(payload.exp! > payload.iat!);

  // Once: nothing more comes, and a second revoke (no open session left) sends nothing.
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(rp.tokens.length, 1, 'one logout token for one session and one client, with two instances sending');
  const deliveries = (await cli(s.dataDir, ['--json', 'deliveries', '--all'])).json;
  t.match(JSON.stringify(deliveries), /logout/, 'the queue lists it, as every message');
});

t.test('disable and delete end sessions at the apps too; a refused try is tried again', async (t) => {
  const s = await provider(t);
  const rp = await logoutReceiver(t);
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party', '--webhook-allow-private', 'loopback', '--backchannel-logout-uri', rp.url);
  const config = await relyingParty(s, registered);
  const signIn = async () => {
    const { url, verifier } = await authorizationRequest(config);
    const { callback } = await authorize(browser, url, 'ada@example.com');
    return (await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: 'st' })).claims()!;
  };
  const first = await signIn();
  rp.answers.push(500);
  t.equal((await cli(s.dataDir, ['user', 'disable', 'ada@example.com'])).code, 0);
  const { payload } = await verifyLogout(s, await rp.next(1, 20_000), registered.client_id);
  t.equal(payload.sid, first.sid, 'disable: delivered on the second try after a 500');
  t.equal((await cli(s.dataDir, ['user', 'enable', 'ada@example.com'])).code, 0);

  const second = await signIn();
  t.not(second.sid, first.sid, 'a new sign-in is a new session');
  const deleted0 = await s.call('DELETE', `/api/user_account/${second.sub}`, { token: await s.signin('admin@example.com') });
  t.equal(deleted0.status, 204, 'an administrator deletes the account (the record API)');
  const deleted = await verifyLogout(s, await rp.next(2), registered.client_id);
  t.equal(deleted.payload.sid, second.sid, 'delete');
  t.equal(deleted.payload.sub, second.sub);
});

t.test('a client without a back-channel URI is not sent anything; client set adds and removes one', async (t) => {
  const s = await provider(t);
  const rp = await logoutReceiver(t);
  const registered = await addClient(s, '--first-party');
  const inside = await cli(s.dataDir, ['client', 'set', registered.client_id, '--backchannel-logout-uri', rp.url]);
  t.not(inside.code, 0, 'an address inside the network is refused when it is set, as for webhooks');
  t.match(inside.err, /loopback address[\s\S]*--webhook-allow-private loopback/);
  const set = await cli(s.dataDir, [
    '--webhook-allow-private',
    'loopback',
    '--json',
    'client',
    'set',
    registered.client_id,
    '--backchannel-logout-uri',
    rp.url,
  ]);
  t.equal(set.code, 0, set.err);
  t.equal(set.json.backchannel_logout_uri, rp.url);
  const cleared = await cli(s.dataDir, ['--json', 'client', 'set', registered.client_id, '--backchannel-logout-uri', '']);
  t.equal(cleared.json.backchannel_logout_uri, null);
  const bad = await cli(s.dataDir, ['client', 'set', registered.client_id, '--backchannel-logout-uri', 'http://example.com/logout']);
  t.not(bad.code, 0);
  t.match(bad.err, /https/, 'plain http only for localhost');
  const noWhat = await cli(s.dataDir, ['client', 'set', registered.client_id]);
  t.not(noWhat.code, 0);
  t.match(noWhat.err, /say what to change/);
  const badSwitch = await cli(s.dataDir, ['client', 'set', registered.client_id, '--two-factor', 'maybe']);
  t.match(badSwitch.err, /on or off/);
  const machine = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Robot', '--credentials'])).json;
  const refused = await cli(s.dataDir, ['client', 'set', machine.client_id, '--two-factor', 'on']);
  t.match(refused.err, /no browser sign-in/);
});

t.test('step-up: a client that needs two factors, an account with none: a page says how to add one, the app gets access_denied', async (t) => {
  const s = await provider(t);
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party', '--two-factor');
  t.equal((await cli(s.dataDir, ['--json', 'client', 'show', registered.client_id])).json.two_factor, true);
  const config = await relyingParty(s, registered);
  const { url } = await authorizationRequest(config);
  const { callback, page } = await authorize(browser, url, 'ada@example.com', { shots: 'oidc-second-factor-needed' });
  t.equal(callback, undefined, 'not sent back signed in at one factor');
  t.match(await page.locator('main').textContent(), /asks for a second factor/);
  // One page for every protocol (issue 73): the words, the link and the way back SAML's page has.
  t.match(await page.getByRole('alert').textContent(), /asks for a second factor when you sign in, and your account has none yet/);
  t.equal(await page.getByRole('link', { name: 'Add a second factor' }).getAttribute('href'), '/account');
  t.equal(await page.getByRole('button', { name: /^Back to .+ \(not signed in\)$/ }).count(), 1, 'the way back says the app gets no sign-in');
  let back: URL | undefined;
  await page.route(`${APP}/**`, (route) => {
    back = new URL(route.request().url());
    return route.fulfill({ status: 200, body: 'back' });
  });
  await page.getByRole('button', { name: /Back to/ }).click();
  await page.waitForURL(`${APP}/**`);
  t.equal(back?.searchParams.get('error'), 'access_denied');

  // The request itself asks (acr_values): the app is told unmet_authentication_requirements.
  const plain = await addClient(s, '--first-party');
  const config2 = await relyingParty(s, plain);
  const asked = await authorizationRequest(config2, 'openid', 'st', { acr_values: MFA });
  const second = await authorize(browser, asked.url, 'ada@example.com');
  let back2: URL | undefined;
  await second.page.route(`${APP}/**`, (route) => {
    back2 = new URL(route.request().url());
    return route.fulfill({ status: 200, body: 'back' });
  });
  await second.page.getByRole('button', { name: /Back to/ }).click();
  await second.page.waitForURL(`${APP}/**`);
  t.equal(back2?.searchParams.get('error'), 'unmet_authentication_requirements');

  // prompt=none cannot skip it: login_required, never a code.
  const silent = await authorizationRequest(config, 'openid', 'st', { prompt: 'none' });
  // The provider's own redirects, followed with this browser's cookies, until it answers the app.
  let at = silent.url.href;
  let answer: URL | undefined;
  for (let hop = 0; hop < 5 && !answer; hop++) {
    const r = await second.context.request.get(at, { maxRedirects: 0 });
    const next = new URL(r.headers().location ?? '', at);
    if (next.href.startsWith(APP)) answer = next;
    else at = next.href;
  }
  t.equal(answer?.searchParams.get('code'), null);
  t.equal(answer?.searchParams.get('error'), 'login_required');
});

t.test('step-up: a one-factor session of an account with a second factor is sent to confirm it first', async (t) => {
  const s = await provider(t);
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party');
  const config = await relyingParty(s, registered);
  // Ada signs in on Gatehouse's pages with her password (one factor); she has a second factor to give.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/account');
  await s.db('user_account').where({ email: 'ada@example.com' }).update({ totp_enabled: true, totp_secret: 'JBSWY3DPEHPK3PXP' });
  const { url } = await authorizationRequest(config, 'openid', 'st', { claims: JSON.stringify({ id_token: { acr: { essential: true, value: MFA } } }) });
  const asked = await authorize(browser, url, 'ada@example.com', { context });
  t.equal(asked.callback, undefined, 'no code at one factor');
  const at = new URL(asked.page.url());
  t.equal(at.pathname, '/signin/confirm');
  t.equal(at.searchParams.get('need'), 'second-factor');
  t.match(at.searchParams.get('return'), /^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
});

t.test('a client switched to two factors takes no refresh token of a one-factor sign-in', async (t) => {
  const s = await provider(t);
  const browser = await launch(t);
  const registered = await addClient(s, '--first-party');
  const config = await relyingParty(s, registered);
  const { url, verifier } = await authorizationRequest(config, 'openid offline_access');
  const { callback } = await authorize(browser, url, 'ada@example.com');
  const tokens = await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  t.equal(tokens.claims()!.acr, SFA);
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.type(refreshed.access_token, 'string', 'refreshed while the client takes one factor');
  t.equal((await cli(s.dataDir, ['client', 'set', registered.client_id, '--two-factor', 'on'])).code, 0);
  await t.rejects(
    oidc.refreshTokenGrant(config, refreshed.refresh_token!),
    { code: 'OAUTH_RESPONSE_BODY_ERROR', error: 'invalid_grant' } as never,
    'refused once it needs two',
  );
});
