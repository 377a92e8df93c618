// Step-up asked for by a service provider nobody in this project wrote: Apache mod_auth_mellon set
// up by docs/saml.md's recipe, with the docs' MellonAuthnContextClassRef block after its
// httpd.conf, so every AuthnRequest asks for REFEDS MFA and mellon refuses an assertion that does
// not say it. Chromium: an account with TOTP gets in (its sign-in asked for the code); an account
// with no second factor reads Gatehouse's page, and its button takes mellon an AuthnFailed,
// which lets no one in; an answer that says less than REFEDS MFA (an IdP-initiated sign-in, which
// no request asked anything of) is refused by mellon itself.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { mellonRecipe } from '../helpers/mellon';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, setSignup } from '../helpers/server';

const ADMIN_PASSWORD = 'a long admin password';

t.test("docs/saml.md's mellon block asking for two factors: REFEDS MFA gets in, an account with none does not", async (t) => {
  // TOTP codes need a clock the test moves; it stays a step behind the wall clock, which mellon
  // reads to check the assertion's times.
  const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 - 29_000);
  const { s, app, errorLog, conf } = await mellonRecipe(t, { more: ['mellon-two-factor'], clock });
  t.match(conf, /MellonAuthnContextClassRef "https:\/\/refeds\.org\/profile\/mfa"/, 'the block is in httpd.conf');

  await setSignup(s, await s.signin('admin@example.com', ADMIN_PASSWORD), 2097057);
  await s.signup('dee@example.com');
  await cli(s.dataDir, ['group', 'add', 'staff', 'dee@example.com']);
  const token = await s.signin('dee@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token);
  const secret: string = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token)).status, 200, 'Dee turns TOTP on');
  clock.advance(30_000);

  const browser = await launch(t);
  const body = async (page: Page) => (await page.locator('body').textContent()) ?? '';

  // Dee signs in with her password and code: mellon accepts the REFEDS MFA assertion.
  const dee = await (await browser.newContext()).newPage();
  await dee.goto(`${app}/private/`);
  await dee.waitForURL((u) => u.pathname.startsWith('/saml/continue/'));
  await fillSignin(dee, 'dee@example.com');
  await dee.getByLabel('Authentication code').fill(await totpAt(secret, clock));
  await dee.getByRole('button', { name: 'Sign in', exact: true }).click();
  await dee.waitForURL(`${app}/private/`, { timeout: 5000 }).catch(async (err) => {
    throw new Error(`${err.message}\nat ${dee.url()}: ${(await body(dee)).slice(0, 400)}\n${errorLog()}`);
  });
  t.match(await body(dee), /REMOTE_USER=dee@example\.com/, 'mellon let her in: the assertion says REFEDS MFA');

  // The administrator has no second factor: Gatehouse's page says so, and nothing goes by itself.
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${app}/private/`);
  await admin.waitForURL((u) => u.pathname.startsWith('/saml/continue/'));
  t.match(new URL(admin.url()).pathname, /-mfa$/, "mellon's request asked for REFEDS MFA");
  await fillSignin(admin, 'admin@example.com', ADMIN_PASSWORD);
  await admin.getByRole('heading', { name: 'A second factor is needed' }).waitFor();
  t.match(await body(admin), /Wiki asks for a second factor/);
  t.equal(new URL(admin.url()).host, new URL(s.config.publicUrl).host, 'the browser stays on Gatehouse');
  await screenshots(admin, 'saml-mellon-no-second-factor');
  // Its button takes mellon the AuthnFailed: mellon lets no one in.
  await admin.getByRole('button', { name: /Back to Wiki/ }).click();
  await admin.waitForURL((u) => u.host === new URL(app).host);
  await admin.waitForLoadState('networkidle');
  t.notMatch(await body(admin), /REMOTE_USER/, 'mellon shows no private page');
  t.match(errorLog(), /Status code is not success, SAML Response: StatusCode1="[^"]*Responder", StatusCode2="[^"]*AuthnFailed"/, 'Lasso read the AuthnFailed');
  await admin.goto(`${app}/private/`);
  t.equal(new URL(admin.url()).host, new URL(s.config.publicUrl).host, 'and has no session: back to Gatehouse to sign in');

  // mellon checks the answer itself: a sign-in started from Gatehouse's console (no request, so
  // nothing asked for two factors) says PasswordProtectedTransport, and mellon refuses it.
  await admin.goto(`${s.config.publicUrl}/admin/saml`);
  const answered = admin.waitForResponse((r) => r.url().startsWith(`${app}/mellon/postResponse`));
  await admin.getByRole('button', { name: 'Sign in to Wiki' }).click();
  t.equal((await answered).status(), 403, 'mellon: Forbidden');
  t.match(
    errorLog(),
    /AuthnContextClassRef \(urn:oasis:names:tc:SAML:2\.0:ac:classes:PasswordProtectedTransport\) does not match the MellonAuthnContextClassRef/,
  );
});
