// docs/oidc-apps.md's Node app (openid-client 6 and jose), run as written: its shell lines and its
// whole app.mjs, in an empty folder as an ordinary user. Chromium signs in through it: a password
// sign-in is one factor (amr pwd, acr REFEDS sfa); /admin asks for two factors with acr_values, so
// an account without a second factor is refused and one with TOTP is asked for its code and gets
// in at REFEDS mfa. Ending the Gatehouse session (`user revoke-sessions`) reaches the app through
// the back-channel; the app refuses logout tokens that are forged, for another app, an ID token,
// not a logout event, or used twice.
//
// What the test changes in the recipe, and nothing else:
//   - the ports: 6336 (Gatehouse) and 3000 (the app) become free ones;
//   - `gatehouse serve` is the test's server (in-process, on the recipe's address, with its
//     --webhook-allow-private), and each other `gatehouse` line runs through the CLI in-process
//     against its store, its `> file` written in the folder;
//   - `npm install` is not run: the folder's node_modules is the project's (the same two libraries);
//   - the other lines run with /bin/sh in the folder, as `nobody` when the test runs as root.
import fs from 'node:fs';
import path from 'node:path';
import * as jose from 'jose';
import t from 'tap';
import type { BrowserContext, Page } from 'playwright-core';
import { freePort, launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { fillSignin } from '../helpers/oidc';
import { ordinaryUser } from '../helpers/saml';
import { PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';
import { appsDocBlock, gatehouseLine, recipeLines, startLine, visit } from '../helpers/apache-openidc';

const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const ADMIN_PASSWORD = 'a long admin password';

t.test("docs/oidc-apps.md's Node app signs people in, asks for two factors where it needs them, and hears when sessions end", async (t) => {
  const [gatePort, appPort] = [await freePort(), await freePort()];
  const ports = (text: string) => text.replaceAll('6336', String(gatePort)).replaceAll('3000', String(appPort));
  const lines = recipeLines(ports(appsDocBlock('node-app-shell')));
  const publicUrl = `http://localhost:${gatePort}`;
  const app = `http://localhost:${appPort}`;
  // Gatehouse names itself http://localhost:<port> on a loopback address without --public-url.
  const serveLine = lines.find((l) => l.startsWith('gatehouse serve'));
  t.equal(serveLine, 'gatehouse serve --webhook-allow-private loopback');
  // TOTP codes are used once: the server's clock moves a step (30 s) by hand between them, from
  // 30 s in the past so that it ends near the wall clock the app checks tokens against.
  const clock = manualClock(Date.now() - 30_000);
  const s = await startTestServer(t, { port: gatePort, publicUrl, webhookAllowPrivate: ['loopback'] }, undefined, { clock });

  const dir = tempDir(t, 'gatehouse-node-app-');
  fs.chmodSync(dir, 0o755);
  const user = ordinaryUser(dir);
  fs.writeFileSync(path.join(dir, 'app.mjs'), appsDocBlock('node-app'));
  fs.symlinkSync(path.join(__dirname, '..', '..', 'node_modules'), path.join(dir, 'node_modules'));
  let running: { output: () => string } | undefined;
  for (const line of lines) {
    if (line === serveLine || line.startsWith('npm install ')) continue;
    if (/^(printf '[^']*' \| )?gatehouse /.test(line)) {
      const r = await gatehouseLine(s.dataDir, line, dir, user);
      t.equal(r.code, 0, `${line}: ${r.err}`);
    } else if (/ node app\.mjs$/.test(line)) {
      t.match(line, new RegExp(`^ISSUER=${publicUrl} APP_URL=${app} `), "the app is told both addresses, Gatehouse's as it names itself");
      running = await startLine(t, line, dir, user, appPort);
    } else throw new Error(`a line the test does not know: ${line}`);
  }
  // The recipe's administrator opens signup; Ada and Tom sign up.
  await setSignup(s, await s.signin('admin@example.com', ADMIN_PASSWORD), 2097057);
  await s.signup('ada@example.com');
  await s.signup('tom@example.com');
  t.ok(running, 'the app runs');
  const client = JSON.parse(fs.readFileSync(path.join(dir, 'app.json'), 'utf8')) as { client_id: string; backchannel_logout_uri: string };
  t.equal(client.backchannel_logout_uri, `${app}/backchannel-logout`);

  const browser = await launch(t);
  const onApp = async (page: Page, pathname: string) =>
    page
      .waitForURL((u) => u.origin === app && u.pathname === pathname, { timeout: 10_000 })
      .catch(async (err) => {
        throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.slice(0, 400)}\n${running!.output()}`);
      });
  /** After the sign-in form: the consent page once per account (the app is not first-party), then the app. */
  const arrive = async (page: Page, pathname: string) => {
    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    await Promise.race([page.waitForURL((u) => u.origin === app, { timeout: 10_000 }), allow.waitFor({ timeout: 10_000 })]).catch(() => undefined);
    if (new URL(page.url()).origin !== app && (await allow.isVisible())) await allow.click();
    await onApp(page, pathname);
  };
  const shown = async (context: BrowserContext, pathname = '/') => (await visit(`${app}${pathname}`, context)).body;

  // A password sign-in: one factor.
  const ada = await browser.newContext();
  const adaPage = await ada.newPage();
  await adaPage.goto(`${app}/`);
  t.equal(await adaPage.locator('body').textContent(), 'not signed in');
  await adaPage.goto(`${app}/login`);
  await fillSignin(adaPage, 'ada@example.com');
  await arrive(adaPage, '/');
  t.equal(await shown(ada), 'signed in: ada@example.com\namr: pwd\nacr: https://refeds.org/profile/sfa', 'the ID token says how: a password, one factor');

  // /admin asks for two factors; she has no second factor: Gatehouse's page says how to add one,
  // and back at the app the refusal says why.
  await adaPage.goto(`${app}/admin`);
  await adaPage.getByRole('heading', { name: 'A second factor is needed' }).waitFor({ timeout: 10_000 });
  await adaPage.getByRole('button', { name: 'Back to Team app' }).click();
  await onApp(adaPage, '/callback');
  t.equal(await adaPage.locator('body').textContent(), 'not signed in: this application needs a second factor, and the account has none');
  t.notMatch(await shown(ada, '/admin'), /^admin:/, 'and /admin stays closed');

  // She adds TOTP; /admin then asks for her code on Gatehouse's page, and lets her in.
  const adaToken = await s.signin('ada@example.com');
  const enrolled = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, adaToken);
  const secret = enrolled.body[0].Attributes.secret as string;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, adaToken)).status, 200);
  clock.advance(30_000);
  await adaPage.goto(`${app}/admin`);
  const code = adaPage.getByLabel('Authentication code');
  const email = adaPage.getByLabel('Email', { exact: true });
  await Promise.race([code.waitFor({ timeout: 10_000 }), email.waitFor({ timeout: 10_000 })]);
  // Turning TOTP on may have ended her other sessions: then she signs in again, password first.
  if (await email.isVisible()) await fillSignin(adaPage, 'ada@example.com');
  await code.waitFor({ timeout: 10_000 });
  const password = adaPage.getByLabel('Password');
  if (await password.isVisible()) await password.fill(PASSWORD);
  await code.fill(await totpAt(secret, clock));
  await adaPage
    .getByRole('button', { name: /^(sign in|continue|verify)$/i })
    .first()
    .click();
  await arrive(adaPage, '/admin');
  t.equal(await adaPage.locator('body').textContent(), 'admin: ada@example.com', 'with two factors, /admin lets her in');
  t.match(await shown(ada), /^amr: .*\bmfa\b/m, 'amr says mfa');
  t.match(await shown(ada), /^acr: https:\/\/refeds\.org\/profile\/mfa$/m, 'acr says REFEDS mfa');

  // Tom signs in too; the operator ends Ada's sessions: the app hears it, Tom stays.
  const tom = await browser.newContext();
  const tomPage = await tom.newPage();
  await tomPage.goto(`${app}/login`);
  await fillSignin(tomPage, 'tom@example.com');
  await arrive(tomPage, '/');
  t.match(await shown(tom), /^signed in: tom@example\.com$/m);
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', 'ada@example.com'])).code, 0);
  let text = await shown(ada);
  for (let i = 0; i < 150 && text !== 'not signed in'; i++) {
    // The command queued the token at the wall clock's time: the server's clock follows it now.
    clock.set(Date.now());
    await new Promise((r) => setTimeout(r, 100));
    text = await shown(ada);
  }
  t.equal(text, 'not signed in', 'the logout token ended her session in the app', text === 'not signed in' ? {} : { app: running!.output() });
  t.match(await shown(tom), /^signed in: tom@example\.com$/m, 'his stays');
  t.same((await cli(s.dataDir, ['--json', 'deliveries'])).json?.deliveries, [], 'delivered: nothing waits in the queue');

  // The app checks what it is sent. Tokens made here with Gatehouse's own key (and another key).
  const tomSub = (await cli(s.dataDir, ['--json', 'user', 'show', 'tom@example.com'])).json?.reference_id as string;
  const jwk = (await s.core.oidc.signingKeys()).keys[0] as jose.JWK & { kid: string };
  const alg = jwk.alg ?? 'RS256';
  const gatehouseKey = await jose.importJWK(jwk, alg);
  const otherKey = (await jose.generateKeyPair(alg, { extractable: true })).privateKey;
  let n = 0;
  const token = (claims: Record<string, unknown>, o: { key?: jose.CryptoKey | Uint8Array; aud?: string; typ?: string; exp?: number } = {}) =>
    new jose.SignJWT({ events: { [LOGOUT_EVENT]: {} }, sub: tomSub, ...claims })
      .setProtectedHeader({ alg, kid: jwk.kid, typ: o.typ ?? 'logout+jwt' })
      .setIssuer(publicUrl)
      .setAudience(o.aud ?? client.client_id)
      .setIssuedAt()
      .setExpirationTime(o.exp ?? '2 minutes')
      .setJti(`test-${++n}`)
      .sign(o.key ?? gatehouseKey);
  const post = async (logoutToken: string, contentType = 'application/x-www-form-urlencoded') => {
    const r = await fetch(`${app}/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: new URLSearchParams({ logout_token: logoutToken }).toString(),
    });
    return { status: r.status, body: await r.text() };
  };
  const refused: Array<[string, Promise<string>, RegExp, string?]> = [
    ['signed with another key', token({}, { key: otherKey }), /signature/],
    ['typed as another kind of JWT', token({}, { typ: 'JWT' }), /typ/],
    ['expired', token({}, { exp: Math.floor(Date.now() / 1000) - 10 }), /exp/],
    ['for another app', token({}, { aud: 'someone-else' }), /aud/],
    ['an ID token (a nonce)', token({ nonce: 'n' }), /ID token/],
    ['not a logout event', token({ events: { 'https://example.com/other': {} } }), /not a logout token/],
    ['not a form', token({}), /form/, 'application/json'],
  ];
  for (const [what, made, reason, type] of refused) {
    const r = await post(await made, type);
    t.equal(r.status, 400, `refused: ${what}`);
    t.match(r.body, reason, what);
  }
  t.match(await shown(tom), /^signed in: tom@example\.com$/m, 'none of those signed him out');
  const good = await token({});
  t.equal((await post(good)).status, 200, 'a good token (sub, no sid) is taken');
  t.equal(await shown(tom), 'not signed in', 'and ends his sessions');
  const again = await post(good);
  t.equal(again.status, 400, 'the same token again is refused');
  t.match(again.body, /already used/);
});
