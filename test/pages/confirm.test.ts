// "Confirm it is you" (/signin/confirm) in Chromium: long after signing in, the account page asks
// before a new way in (an app password, an API key) and the console before a SCIM token or an
// invitation; the page takes the password (a wrong one is said), a code, or a passkey, and goes
// back to where the person was. A hostile `return` goes to the account page. With
// need=second-factor it asks only for a second factor, and says how to add one where the account
// has none. Photographed at 360 and 1280 px.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { launch, screenshots } from '../helpers/browser';
import { manualClock, totpAt } from '../helpers/clock';
import { addClientFor, fillSignin, relyingParty, startApp } from '../helpers/oidc';
import { passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { PASSWORD } from '../helpers/server';

const ELEVEN_MINUTES = 11 * 60 * 1000;

async function setUp(t: Parameters<typeof passkeyServer>[0]) {
  // On a TOTP step boundary: codes a step apart never roll over under the test.
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const { s, base } = await passkeyServer(t, {}, { clock });
  t.equal((await s.signup('ada@example.com')).status, 200);
  const browser = await launch(t);
  return { s, base, clock, browser };
}

async function signedIn(browser: Awaited<ReturnType<typeof launch>>, base: string, email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}/signin`);
  await fillSignin(page, email);
  await page.waitForURL(/\/account/);
  return page;
}

const returnOf = (page: Page) => page.locator('input[name="return"]').first().inputValue();

t.test('the account page asks to confirm before a new way in, then goes back to the section', async (t) => {
  const { s, base, clock, browser } = await setUp(t);
  const page = await signedIn(browser, base, 'ada@example.com');
  t.equal(await page.getByRole('button', { name: 'Make an app password' }).count(), 1, 'just signed in: the forms are there');

  // The page was open while the window passed: the form sends her to confirm, not to an error.
  await page.getByLabel('Which app is it for?').fill('NAS');
  clock.advance(ELEVEN_MINUTES);
  await page.getByRole('button', { name: 'Make an app password' }).click();
  await page.waitForURL(`${base}/signin/confirm?return=%2Faccount%23app-passwords`);
  t.equal(
    await s
      .db('app_password')
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    0,
    'nothing made',
  );
  await screenshots(page, 'confirm');
  t.match(await page.locator('main').textContent(), /needs a sign-in in the last 10 minutes/);

  await page.getByLabel('Password').fill('not my password');
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  t.match(await page.getByRole('alert').textContent(), /password is wrong/, 'a wrong password is said');
  t.equal(await returnOf(page), '/account#app-passwords', 'and the way back is kept');
  await screenshots(page, 'confirm-error');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  await page.waitForURL(`${base}/account#app-passwords`);
  await page.getByLabel('Which app is it for?').fill('NAS');
  await page.getByRole('button', { name: 'Make an app password' }).click();
  t.match(await page.locator('#app-password').textContent(), /^\S{8}-\S{8}-\S{8}-\S{8}$/, 'made after confirming');

  // Opened after the window: the sections offer the way to confirm instead of forms that would fail.
  clock.advance(ELEVEN_MINUTES);
  await page.goto(`${base}/account`);
  t.equal(await page.getByRole('button', { name: 'Make an API key' }).count(), 0);
  t.equal(await page.getByRole('button', { name: 'Add a passkey' }).count(), 0);
  await screenshots(page, 'account-confirm-first');
  await page.getByRole('link', { name: 'Confirm it is you to make an API key' }).click();
  await page.waitForURL(`${base}/signin/confirm?return=%2Faccount%23api-keys`);
  // The keyboard alone: the password field has the focus; Enter sends it.
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(`${base}/account#api-keys`);
  await page.getByLabel('Which script is it for?').fill('backup');
  await page.getByRole('button', { name: 'Make an API key' }).click();
  t.match(await page.locator('#api-key').textContent(), /^gh_/, 'the API key is made');
});

t.test('the console asks to confirm before a SCIM token and an invitation', async (t) => {
  const { s, base, clock, browser } = await setUp(t);
  const page = await signedIn(browser, base, 'admin@example.com');
  const cases = [
    {
      path: '/admin/provisioning',
      field: 'Which service holds it?',
      value: 'entra',
      button: 'Make token',
      table: 'scim_token',
      made: '#scim-token',
      what: 'no token made',
    },
    {
      path: '/admin/invitations',
      field: 'Email',
      value: 'ben@example.com',
      button: 'Send the invitation',
      table: 'invitation',
      made: '#invitation-link',
      what: 'no invitation made',
    },
  ];
  for (const c of cases) {
    clock.advance(ELEVEN_MINUTES);
    const make = async () => {
      await page.getByLabel(c.field).fill(c.value);
      await page.getByRole('button', { name: c.button }).click();
    };
    await page.goto(`${base}${c.path}`);
    await make();
    await page.waitForURL(`${base}/signin/confirm?return=${encodeURIComponent(c.path)}`);
    t.equal(Number((await s.db(c.table).count({ n: '*' }).first())?.n), 0, c.what);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    await page.waitForURL(`${base}${c.path}`);
    await make();
    await page.locator(c.made).waitFor();
  }
});

t.test('a hostile return goes to the account page', async (t) => {
  const { base, clock, browser } = await setUp(t);
  const page = await signedIn(browser, base, 'ada@example.com');
  for (const hostile of [
    'https://evil.example/',
    '//evil.example/account',
    '/\\evil.example',
    'javascript:alert(1)',
    '/account/../signout',
    '/account?next=https://evil.example',
    '/oidc/interaction/../../evil',
    '/signin/confirm?return=/account',
    '',
  ]) {
    await page.goto(`${base}/signin/confirm?return=${encodeURIComponent(hostile)}`);
    t.equal(await returnOf(page), '/account', `${JSON.stringify(hostile)} becomes the account page`);
  }
  for (const fine of ['/account', '/account#passkeys', '/admin/invitations', '/oidc/interaction/Ab-c_9', '/saml/continue/h4ndle']) {
    await page.goto(`${base}/signin/confirm?return=${encodeURIComponent(fine)}`);
    t.equal(await returnOf(page), fine, `${fine} is kept`);
  }
  // Sent as a form field too: a hostile value there goes to the account page as well.
  clock.advance(ELEVEN_MINUTES);
  await page.goto(`${base}/signin/confirm?return=%2Faccount`);
  await page
    .locator('input[name="return"]')
    .first()
    .evaluate((input) => ((input as { value: string }).value = 'https://evil.example/'));
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  await page.waitForURL(`${base}/account`);
  t.pass('confirmed, and sent to the account page');

  // Signed out: the sign-in page, not the form.
  const guest = await browser.newPage();
  await guest.goto(`${base}/signin/confirm?return=%2Faccount`);
  t.match(guest.url(), /\/signin$/);
});

t.test('need=second-factor: only a second factor is asked; an account without one is told how to add one', async (t) => {
  const { s, base, clock, browser } = await setUp(t);
  // Ada has only a password: nothing to enter, and the way to add a second factor.
  const page = await signedIn(browser, base, 'ada@example.com');
  await page.goto(`${base}/signin/confirm?return=%2Foidc%2Finteraction%2Fstep1&need=second-factor`);
  t.match(await page.locator('main').textContent(), /asks for a second factor, and your account has none yet/);
  t.equal(await page.locator('main input:not([type="hidden"])').count(), 0, 'nothing to enter');
  t.equal(await page.getByRole('link', { name: 'Add a passkey' }).getAttribute('href'), '/account#passkeys');
  t.equal(await page.getByRole('link', { name: 'Turn on two-factor authentication' }).getAttribute('href'), '/account#two-factor');
  await screenshots(page, 'confirm-no-second-factor');

  // Ben has a password and a passkey; he signed in with the password (one factor). A passkey steps up.
  await s.signup('ben@example.com');
  const ben = await withAuthenticator(browser);
  await ben.page.goto(`${base}/signin`);
  await fillSignin(ben.page, 'ben@example.com');
  await ben.page.waitForURL(/\/account/);
  await ben.page.getByLabel('Name of the new passkey').fill('Laptop');
  await ben.page.getByRole('button', { name: 'Add a passkey' }).click();
  await ben.page.waitForURL(/done=passkey_added/);
  const sessionOf = (email: string) =>
    s
      .db('session')
      .join('user_account', 'user_account.id', 'session.account_id')
      .where('user_account.email', email)
      .whereNull('session.ended_at')
      .first('session.two_factor');
  t.notOk((await sessionOf('ben@example.com')).two_factor, 'a password session: one factor');
  await ben.page.goto(`${base}/signin/confirm?return=%2Fsaml%2Fcontinue%2Fstep2&need=second-factor`);
  t.equal(await ben.page.getByLabel('Password').count(), 0, 'the password is not a second factor: not asked');
  t.match(await ben.page.locator('main').textContent(), /asks for a second factor: a passkey/);
  await screenshots(ben.page, 'confirm-second-factor');
  await ben.page.getByRole('button', { name: 'Use a passkey' }).click();
  await ben.page.waitForURL(`${base}/saml/continue/step2`);
  t.ok((await sessionOf('ben@example.com')).two_factor, 'the same session, now two factors');

  // Cy has TOTP: the code box only, and the code makes the session a two-factor one.
  await s.signup('cy@example.com');
  const cyToken = await s.signin('cy@example.com');
  const secret: string = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, cyToken)).body[0].Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, s.core.clock) }, cyToken)).status, 200);
  const cy = await (await browser.newContext()).newPage();
  await cy.goto(`${base}/signin`);
  await fillSignin(cy, 'cy@example.com');
  // The code of the next step: the one that turned TOTP on is spent.
  clock.advance(30_000);
  await cy.getByLabel('Authentication code').fill(await totpAt(secret, s.core.clock));
  await cy.getByRole('button', { name: 'Sign in', exact: true }).click();
  await cy.waitForURL(/\/account/);
  await cy.goto(`${base}/signin/confirm?return=%2Faccount%23two-factor&need=second-factor`);
  t.equal(await cy.getByLabel('Password').count(), 0);
  await screenshots(cy, 'confirm-code');
  clock.advance(30_000);
  await cy.getByLabel('Code from your authenticator app').fill(await totpAt(secret, s.core.clock));
  await cy.getByRole('button', { name: 'Confirm with the code' }).click();
  await cy.waitForURL(`${base}/account#two-factor`);
  const audit = await s.db('audit_event').where({ event: 'reauthenticated' }).orderBy('id');
  t.same(
    audit.map((r: { details: string }) => JSON.parse(r.details).method),
    ['passkey', 'otp'],
    'audited: reauthenticated, with how',
  );
});

t.test('an app that needs two factors: a password session confirms with a passkey on this page and the sign-in goes on', async (t) => {
  const { s, base, browser } = await setUp(t);
  const app = await startApp(t);
  const client = await addClientFor(s, app.redirect, '--first-party', '--two-factor');
  const config = await relyingParty(s, client);
  // Ben signs in with his password (one factor), and has a passkey to give.
  await s.signup('ben@example.com');
  const ben = await withAuthenticator(browser);
  await ben.page.goto(`${base}/signin`);
  await fillSignin(ben.page, 'ben@example.com');
  await ben.page.waitForURL(/\/account/);
  await ben.page.getByLabel('Name of the new passkey').fill('Laptop');
  await ben.page.getByRole('button', { name: 'Add a passkey' }).click();
  await ben.page.waitForURL(/done=passkey_added/);

  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: app.redirect,
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  });
  await ben.page.goto(url.href);
  await ben.page.waitForURL((u) => u.pathname === '/signin/confirm');
  const at = new URL(ben.page.url());
  t.equal(at.searchParams.get('need'), 'second-factor');
  t.match(at.searchParams.get('return'), /^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
  t.equal(await ben.page.getByLabel('Password').count(), 0, 'a second factor only');
  await ben.page.getByRole('button', { name: 'Use a passkey' }).click();
  await ben.page.waitForURL((u) => u.href.startsWith(app.redirect));
  const tokens = await oidc.authorizationCodeGrant(config, app.last()!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  const claims = tokens.claims()!;
  t.equal(claims.acr, 'https://refeds.org/profile/mfa', 'the app is told: two factors');
  t.same(claims.amr, ['pwd', 'hwk', 'user', 'mfa'], 'amr says the password, then the passkey, two factors');
});
