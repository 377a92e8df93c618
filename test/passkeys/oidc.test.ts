// The OpenID Connect login with a passkey: an app (openid-client) sends the browser to Gatehouse,
// whose sign-in page takes the passkey (Chromium's virtual authenticator offers it in the email
// field's autofill), and the ID token says amr ["hwk", "user"].
import t from 'tap';
import * as oidc from 'openid-client';
import { launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { credentialsOf, passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { startApp } from '../helpers/oidc';

t.test('an OIDC sign-in with a passkey: amr hwk, user', async (t) => {
  const { s, base } = await passkeyServer(t);
  await s.signup('ada@example.com');
  const token = await s.signin('ada@example.com');
  const browser = await launch(t);
  // Ada adds a passkey through the JSON actions, from a page of Gatehouse's origin.
  const a = await withAuthenticator(browser);
  await a.page.goto(`${base}/ping`);
  await a.page.addScriptTag({ url: '/assets/webauthn.js' });
  const options = (await s.action('user_account', 'passkey_options', {}, token)).body[0].Attributes.value;
  const response = await a.page.evaluate((o) => (globalThis as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: o }), options);
  t.equal((await s.action('user_account', 'passkey_register', { response }, token)).status, 200);
  const [credential] = await credentialsOf(a);

  const app = await startApp(t);
  const added = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', app.redirect, '--first-party']);
  const config = await oidc.discovery(new URL(s.config.publicUrl), added.json.client_id, added.json.client_secret, undefined, {
    execute: [oidc.allowInsecureRequests],
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: app.redirect,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  });
  // Another browser, the same passkey: the login page's autofill signs in and returns to the app.
  const b = await withAuthenticator(browser);
  await b.cdp.send('WebAuthn.addCredential', { authenticatorId: b.authenticatorId, credential: { ...credential } });
  await b.page.goto(url.href);
  await b.page.waitForURL((u) => u.pathname === '/callback');
  const tokens = await oidc.authorizationCodeGrant(config, app.last()!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  t.same(tokens.claims()?.amr, ['hwk', 'user', 'mfa'], 'amr says a hardware-bound key that verified its user');
});
