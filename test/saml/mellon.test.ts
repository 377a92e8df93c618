// A SAML service provider nobody in this project wrote: Apache httpd with mod_auth_mellon (Lasso),
// set up by docs/saml.md's recipe as written (issue 58, item 11): its shell lines and its whole
// httpd.conf, run in an empty folder as an ordinary user. Chromium signs in through it: a member
// of the allowed group gets in, someone outside the gate and a disabled account do not, and
// signing out through mellon ends the Gatehouse session.
//
// What the test changes in the recipe, and nothing else: see test/helpers/mellon.ts.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { mellonRecipe } from '../helpers/mellon';
import { fillSignin } from '../helpers/oidc';
import { setSignup } from '../helpers/server';

const ADMIN_PASSWORD = 'a long admin password';

t.test("docs/saml.md's Apache mod_auth_mellon setup signs people in with Gatehouse, and out", async (t) => {
  const { s, app, errorLog, lines, conf, serveLine } = await mellonRecipe(t);
  t.match(conf, /^Listen 127\.0\.0\.1:\d+$/m, 'the file is whole: it says where Apache listens');
  t.match(conf, /^LoadModule auth_mellon_module /m, 'and loads mellon');
  t.ok(lines.length > 5, 'the recipe ran, line by line');
  t.equal(serveLine, `gatehouse serve --public-url ${s.config.publicUrl}`);
  const sp = await cli(s.dataDir, ['--json', 'saml', 'sp', 'list']);
  t.equal(sp.json?.service_providers?.[0]?.authn_requests_signed, true, "mellon signs its requests: Gatehouse checks them with the metadata's certificate");

  // Someone outside staff, and a member who will be disabled.
  await setSignup(s, await s.signin('admin@example.com', ADMIN_PASSWORD), 2097057);
  for (const email of ['bob@example.com', 'cy@example.com']) await s.signup(email);
  await cli(s.dataDir, ['group', 'add', 'staff', 'cy@example.com']);

  // No resolver rules: Chromium sends *.localhost to this machine by itself.
  const browser = await launch(t);
  const signIn = async (email: string, password?: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app}/private/`);
    await page.waitForURL((u) => u.pathname.startsWith('/saml/continue/'));
    if (email === 'admin@example.com') await screenshots(page, 'saml-signin');
    await fillSignin(page, email, password);
    await page.waitForLoadState('networkidle');
    return { context, page };
  };

  // A member of the gate: mellon receives the Response and the page sees who signed in.
  const admin = await signIn('admin@example.com', ADMIN_PASSWORD);
  await admin.page.waitForURL(`${app}/private/`, { timeout: 5000 }).catch(async (err) => {
    throw new Error(`${err.message}\nat ${admin.page.url()}: ${(await admin.page.locator('body').textContent())?.slice(0, 400)}\n${errorLog()}`);
  });
  const shown = (await admin.page.locator('body').textContent())!;
  t.match(shown, /REMOTE_USER=admin@example\.com/, 'REMOTE_USER is the NameID (the email)');
  t.match(shown, /MELLON_email=admin@example\.com/);
  t.match(shown, /MELLON_username=admin/);
  t.match(shown, /MELLON_groups=[^\n]*\bstaff\b/, 'the managed groups, staff among them');
  await screenshots(admin.page, 'saml-mellon-app');

  // Signing out through mellon: its LogoutRequest ends the Gatehouse session, its LogoutResponse brings the browser back.
  await admin.page.goto(`${app}/mellon/logout?ReturnTo=${encodeURIComponent(`${app}/`)}`);
  await admin.page.waitForURL(`${app}/`);
  await admin.page.goto(`${s.config.publicUrl}/account`);
  t.match(new URL(admin.page.url()).pathname, /^\/signin/, 'the Gatehouse session has ended');
  await admin.context.close();

  // Outside the gate: a page says so, and mellon gets nothing.
  const bob = await signIn('bob@example.com');
  t.match(await bob.page.locator('body').textContent(), /may not sign in to Wiki/);
  t.equal(new URL(bob.page.url()).host, new URL(s.config.publicUrl).host, 'the browser stays on Gatehouse');
  await screenshots(bob.page, 'saml-not-allowed');
  await bob.context.close();

  // A disabled account cannot sign in, so nothing is posted.
  await cli(s.dataDir, ['user', 'disable', 'cy@example.com']);
  const cy = await signIn('cy@example.com');
  t.notOk(cy.page.url().startsWith(app), 'a disabled account never reaches the app');
  t.match(await cy.page.locator('body').textContent(), /disabled|incorrect|not/i);
  await cy.context.close();
});
