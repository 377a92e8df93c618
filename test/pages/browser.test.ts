// The pages in a real browser (Debian Chromium through playwright-core): sign up and open the
// link from the real mail; reset a password by mail; enrol TOTP from the QR page's key and sign
// in with a code; end another session. Every page is photographed at 360 and 1280 px.
import t from 'tap';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { freePort, launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { PASSWORD, setSignup, startTestServer } from '../helpers/server';
import { startSmtp } from '../helpers/smtp';

const linkIn = (text: string, path: string) => {
  const m = new RegExp(`(http\\S+/${path}#token=\\S+)`).exec(text);
  if (!m) throw new Error(`no ${path} link in the mail`);
  return m[1];
};

async function setUp(t: Parameters<typeof startTestServer>[0]) {
  const smtp = await startSmtp(t);
  const port = await freePort();
  // On a TOTP step boundary, so enrolment and signin codes are one step apart.
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}`, smtpUrl: smtp.url }, undefined, { clock });
  await s.signup('admin@example.com');
  const adminToken = await s.signin('admin@example.com');
  await setSignup(s, adminToken, 2097057);
  const browser = await launch(t);
  return { s, smtp, clock, browser };
}

async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/signin`);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

t.test('sign up on /signup, confirm the address from the mail, reset the password by mail', async (t) => {
  const { s, smtp, browser } = await setUp(t);
  const page = await browser.newPage();
  await page.goto(`${s.url}/signup`);
  await screenshots(page, 'signup');
  await page.getByLabel('Name', { exact: true }).fill('Ada');
  await page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await page.getByLabel('Password', { exact: true }).fill('short');
  await page.getByLabel('Password again').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  t.match(await page.getByRole('alert').textContent(), /at least 8 characters/, 'a weak password shows as a message');
  await screenshots(page, 'signup-error');
  t.equal(await page.getByLabel('Email', { exact: true }).inputValue(), 'ada@example.com', 'what was typed stays');
  await page.getByLabel('Username (optional)').fill('Ada Lovelace');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  t.match(await page.getByRole('alert').textContent(), /“Username”|username/i, 'a malformed username is refused in words');
  t.equal(await page.getByLabel('Username (optional)').inputValue(), 'Ada Lovelace', 'and stays to be mended');
  await page.getByLabel('Username (optional)').fill('ada.l');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/account/);
  t.match(await page.getByRole('status').first().textContent(), /Your account is ready/);
  t.match(await page.locator('dl').textContent(), /Confirmed\s*not yet/);
  t.equal(await page.locator('#username').textContent(), 'ada.l', 'the username chosen at signup');
  await screenshots(page, 'account');

  // The verification link from the real mail opens the page, which confirms the address.
  const link = linkIn((await smtp.next('ada@example.com')).text, 'verify-email');
  await page.goto(link);
  t.equal(new URL(page.url()).hash, '', 'the token left the address bar');
  await screenshots(page, 'verify-email');
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  t.match(await page.getByRole('status').textContent(), /Your email address is confirmed/);
  await screenshots(page, 'verify-email-done');
  await page.goto(`${s.url}/account`);
  t.match(await page.locator('dl').textContent(), /Confirmed\s*yes/);
  // The link works once.
  await page.goto(link);
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  t.ok(await page.getByRole('alert').isVisible(), 'a used link says so');

  // Reset by mail, from a signed-out browser.
  const other = await browser.newPage();
  await other.goto(`${s.url}/reset-password`);
  await screenshots(other, 'reset-password');
  await other.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await other.getByRole('button', { name: 'Send me a link' }).click();
  t.match(await other.getByRole('status').textContent(), /on its way/);
  const reset = linkIn((await smtp.next('ada@example.com', 2)).text, 'reset-password');
  await other.goto(reset);
  t.ok(await other.getByRole('heading', { name: 'Get a link by email' }).isHidden(), 'with a token, only the new-password form shows');
  await screenshots(other, 'reset-password-token');
  await other.getByLabel('New password', { exact: true }).fill('a new and long password 7');
  await other.getByLabel('New password again').fill('a new and long password 7');
  await other.getByRole('button', { name: 'Set the new password' }).click();
  await other.waitForURL(/\/signin\?done=reset/);
  t.match(await other.getByRole('status').textContent(), /password is changed/);
  await signIn(other, s.url, 'ada@example.com', PASSWORD);
  t.match(await other.getByRole('alert').textContent(), /wrong email or password/i, 'the old password no longer works');
  await screenshots(other, 'signin-error');
  await signIn(other, s.url, 'ada@example.com', 'a new and long password 7');
  await other.waitForURL(/\/account/);
  t.pass('signed in with the new password');
  // The reset ended the first browser's session.
  await page.goto(`${s.url}/account`);
  t.match(page.url(), /\/signin$/, 'the old session is over');
  await screenshots(page, 'signin');
});

t.test('enrol TOTP from the QR page, sign in with a code, end another session', async (t) => {
  const { s, clock, browser } = await setUp(t);
  await s.signup('tom@example.com');
  const laptop = await browser.newContext({ userAgent: 'Laptop browser' });
  const phone = await browser.newContext({ userAgent: 'Phone browser' });
  const page = await laptop.newPage();
  // Keyboard only: type, Tab, Enter.
  await page.goto(`${s.url}/signin`);
  await page.waitForFunction("document.activeElement && document.activeElement.id === 'f-email'"); // autofocus
  await page.keyboard.type('tom@example.com');
  await page.keyboard.press('Tab');
  await page.keyboard.type(PASSWORD);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/account/);

  await page.getByLabel('Password').first().fill(PASSWORD);
  await page.getByRole('button', { name: 'Set up' }).click();
  t.ok(await page.locator('.qr svg').isVisible(), 'a QR code is shown');
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  t.match(secret, /^[A-Z2-7]{16,}$/);
  await screenshots(page, 'account-totp-qr');
  // A mistyped code keeps the same enrolment: the QR code and the key stay, no new secret.
  await page.getByLabel('Code from the app').fill('000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  t.ok(await page.getByRole('alert').isVisible(), 'the wrong code is refused');
  t.ok(await page.locator('.qr svg').isVisible(), 'the QR code is still shown');
  t.equal((await page.locator('#totp-secret').textContent())!.trim(), secret, 'with the same key');
  await screenshots(page, 'account-totp-mistyped');
  const step = Math.floor(clock.now() / 30000);
  await page.getByLabel('Code from the app').fill(await generate({ secret, epoch: step * 30 }));
  await page.getByRole('button', { name: 'Turn on' }).click();
  const codes = await page.locator('#recovery-codes li').allTextContents();
  t.equal(codes.length, 10, 'ten recovery codes, shown once');
  await screenshots(page, 'account-recovery-codes');
  await page.goto(`${s.url}/account`);
  t.equal(await page.locator('#recovery-codes').count(), 0, 'not shown again');
  t.match(await page.getByRole('heading', { name: 'Two-factor authentication' }).locator('..').textContent(), /On: signing in asks/);

  // Another browser signs in: the password alone is not enough. The right password is not an
  // error, and is not asked again: the next step asks for the code alone (issue 73: a red box
  // asked for the code and the password again).
  clock.advance(30_000);
  const p2 = await phone.newPage();
  await signIn(p2, s.url, 'tom@example.com', PASSWORD);
  await p2.getByRole('heading', { name: 'One more step' }).waitFor();
  t.equal(await p2.getByRole('alert').count(), 0, 'no error box');
  t.equal(await p2.getByLabel('Password').count(), 0, 'the password is not asked again');
  t.match(await p2.locator('main').textContent(), /asks for a code from its authenticator app/);
  await p2.waitForFunction("document.activeElement && document.activeElement.id === 'f-otp'"); // autofocus
  t.same(await outsideItsBox(p2), [], 'nothing leaves its box at 1280 px');
  await screenshots(p2, 'signin-totp');
  // A mistyped code: said, and the same step stays (still no password).
  await p2.keyboard.type('000000');
  await p2.keyboard.press('Enter');
  t.match(await p2.getByRole('alert').textContent(), /code is wrong/);
  t.equal(await p2.getByLabel('Password').count(), 0, 'still only the code');
  await p2.setViewportSize({ width: 360, height: 800 });
  t.same(await outsideItsBox(p2), [], 'nothing leaves its box at 360 px');
  await screenshots(p2, 'signin-totp-mistyped');
  await p2.getByLabel('Authentication code').fill(await generate({ secret, epoch: (step + 1) * 30 }));
  await p2.getByRole('button', { name: 'Sign in', exact: true }).click();
  await p2.waitForURL(/\/account/);
  t.pass('signed in with the code');

  // The laptop ends the phone's session.
  await page.goto(`${s.url}/account`);
  t.match(await page.locator('ul.sessions li').first().textContent(), /this browser/i, 'this browser first');
  const phoneRow = page.locator('ul.sessions li', { hasText: 'Phone browser' });
  t.equal(await phoneRow.count(), 1);
  await screenshots(page, 'account-sessions');
  await phoneRow.getByRole('button', { name: /Sign out the session/ }).click();
  t.match(await page.getByRole('status').first().textContent(), /session is signed out/);
  await p2.goto(`${s.url}/account`);
  t.match(p2.url(), /\/signin$/, 'the phone is signed out on its next request');

  // A locked-out account says so on the page, as over the API.
  for (let i = 0; i < 10; i++) await s.action('user_account', 'signin', { email: 'admin@example.com', password: 'wrong password 123' });
  await signIn(p2, s.url, 'admin@example.com', PASSWORD);
  t.match(await p2.getByRole('alert').textContent(), /try again|locked|too many/i, 'the lockout is a clear message');
});

t.test('every page: CSP and frame headers, labelled inputs, cookie flags, no cookie for the API, CSRF', async (t) => {
  const { s, browser } = await setUp(t);
  const page = await browser.newPage();
  for (const path of ['/signin', '/signup', '/verify-email', '/reset-password']) {
    const res = await page.goto(`${s.url}${path}`);
    t.equal(res!.headers()['content-security-policy'], "default-src 'self'; frame-ancestors 'none'; base-uri 'none'", `${path}: CSP`);
    t.equal(res!.headers()['x-frame-options'], 'DENY');
    const unlabelled = await page.evaluate<string[]>(
      `[...document.querySelectorAll('input:not([type=hidden])')].filter((i) => !document.querySelector('label[for="' + i.id + '"]')).map((i) => i.name)`,
    );
    t.same(unlabelled, [], `${path}: every input has a label`);
  }
  // Session cookie flags.
  await signIn(page, s.url, 'admin@example.com', PASSWORD);
  await page.waitForURL(/\/account/);
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === 'gatehouse_session')!;
  t.match(session, { httpOnly: true, sameSite: 'Lax', path: '/' });
  t.ok(cookies.find((c) => c.name === 'gatehouse_csrf')?.httpOnly);
  t.equal(await page.evaluate<string>('JSON.stringify(localStorage)'), '{}', 'nothing in localStorage');
  t.notMatch(await page.evaluate<string>('document.cookie'), /gatehouse/, 'scripts cannot read the cookies');
  // The JSON APIs never accept the cookie.
  const api = await fetch(`${s.url}/api/me`, { headers: { cookie: `gatehouse_session=${session.value}` } });
  t.equal(api.status, 401, 'GET /api/me with only the page cookie: 401');

  // A cross-site form post is refused, with or without the CSRF cookie.
  const csrf = cookies.find((c) => c.name === 'gatehouse_csrf')!.value;
  const cookie = `gatehouse_session=${session.value}; gatehouse_csrf=${csrf}`;
  const crossSite = await fetch(`${s.url}/account/signout-everywhere`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', cookie },
    body: `csrf=${csrf}`,
  });
  t.equal(crossSite.status, 403, 'another Origin: 403');
  const noToken = await fetch(`${s.url}/account/signout-everywhere`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: 'csrf=forged',
  });
  t.equal(noToken.status, 403, 'a wrong CSRF token: 403');
  t.match(await noToken.text(), /this form has expired/i);
  await page.goto(`${s.url}/account`);
  t.match(page.url(), /\/account$/, 'still signed in: neither post did anything');
  await screenshots(page, 'account-admin');

  // Under https the cookies are Secure with the __Host- prefix.
  const https = await startTestServer(t, { publicUrl: 'https://id.example.com' });
  const res = await fetch(`${https.url}/signin`);
  t.match(res.headers.get('set-cookie'), /^__Host-gatehouse_csrf=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure/);
  // --no-pages turns them off.
  const off = await startTestServer(t, { pages: false });
  t.equal((await fetch(`${off.url}/signin`)).status, 404);
  const closed = await startTestServer(t);
  await closed.signup('first@example.com');
  const closedPage = await fetch(`${closed.url}/signup`);
  t.equal(closedPage.status, 404, '/signup while signup is closed');
  t.match(await closedPage.text(), /Signup is closed/);
});

t.test('with --require-verified-email, the pages say to confirm the address first', async (t) => {
  const smtp = await startSmtp(t);
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}`, smtpUrl: smtp.url, requireVerifiedEmail: true });
  await s.signup('admin@example.com');
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  const browser = await launch(t);
  const page = await browser.newPage();
  await page.goto(`${s.url}/signup`);
  await page.getByLabel('Name', { exact: true }).fill('Una');
  await page.getByLabel('Email', { exact: true }).fill('una@example.com');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  t.match(await page.getByRole('status').textContent(), /account is created.*confirm your email address first/i);
  await screenshots(page, 'signin-unverified');
  await page.goto(linkIn((await smtp.next('una@example.com')).text, 'verify-email'));
  await page.getByRole('button', { name: 'Confirm my address' }).click();
  await signIn(page, s.url, 'una@example.com', PASSWORD);
  await page.waitForURL(/\/account/);
  t.pass('confirmed, then signed in');
});
