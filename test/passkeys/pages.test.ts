// Passkeys on the pages, through Chromium's own WebAuthn stack with a virtual authenticator
// (DevTools' WebAuthn domain: resident keys, user verification), on http://localhost:<port>
// (an IP address cannot be a relying-party id). Add a passkey, sign in with it in a fresh browser
// (the credential exported and added to a new authenticator) with TOTP on and not asked, autofill,
// passkey-only signup, removal and the last-passkey rule, a clone refused. Screenshots at 360 and
// 1280 px of every new state.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch, screenshots } from '../helpers/browser';
import { manualClock, totpAt } from '../helpers/clock';
import { credentialsOf, passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { cli } from '../helpers/cli';
import { countRows, PASSWORD, tokenOf, type TestServer } from '../helpers/server';

/**
 * The sign-in page after a failed password: its autofill request does not start again over the
 * refusal, so the button's request is the only one (a virtual authenticator answers any request
 * at once, which would race the button).
 */
async function signinWithoutAutofill(page: Page, base: string) {
  await page.goto(`${base}/signin`);
  await page.getByLabel('Email', { exact: true }).fill('nobody@example.com');
  await page.getByLabel('Password').fill('not the password 1');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('alert').first().waitFor();
  await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
}

async function addPasskey(page: Page, name: string) {
  await page.getByLabel('Name of the new passkey').fill(name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.waitForURL(/done=passkey_added/);
}

async function audited(s: TestServer, event: string): Promise<number> {
  return Number((await s.db('audit_event').where({ event }).count({ n: '*' }).first())?.n ?? 0);
}

t.test('add a passkey, sign in with it in a fresh browser (TOTP on, not asked), autofill, removal', async (t) => {
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, {}, { clock });
  await s.signup('ada@example.com');
  // TOTP on: a passkey that verified its user needs no code after it.
  const token = await s.signin('ada@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  const on = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token);
  clock.advance(30_000);
  t.equal(on.status, 200, 'TOTP is on');

  const browser = await launch(t);
  const laptop = await withAuthenticator(browser);
  await laptop.page.goto(`${base}/signin`);
  await laptop.page.getByLabel('Email', { exact: true }).fill('ada@example.com');
  await laptop.page.getByLabel('Password').fill(PASSWORD);
  await laptop.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await laptop.page.getByLabel('Authentication code').fill(await totpAt(secret, clock));
  await laptop.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await laptop.page.waitForURL(/\/account/);
  await laptop.page.getByRole('heading', { name: 'Passkeys' }).waitFor();
  await screenshots(laptop.page, 'account-passkeys-none');
  await addPasskey(laptop.page, 'Laptop <b>');
  t.match(await laptop.page.locator('#passkey-list').textContent(), /Laptop <b>/, 'the name is shown as typed (escaped)');
  await screenshots(laptop.page, 'account-passkeys-added');
  const [credential] = await credentialsOf(laptop);
  t.ok(credential.isResidentCredential, 'a discoverable credential (no email needed to sign in)');
  t.equal(credential.rpId, 'localhost');
  t.equal(await audited(s, 'passkey_added'), 1, 'audited');

  // A fresh browser with the same passkey (the credential moved to a new authenticator), used with
  // the button.
  const phone = await withAuthenticator(browser);
  await phone.page.goto(`${base}/signin`);
  await phone.page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
  t.equal(await phone.page.getByLabel('Email', { exact: true }).getAttribute('autocomplete'), 'username webauthn', 'the email field offers passkeys');
  await screenshots(phone.page, 'signin-passkey');
  await signinWithoutAutofill(phone.page, base);
  await phone.cdp.send('WebAuthn.addCredential', { authenticatorId: phone.authenticatorId, credential: { ...credential } });
  await phone.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await phone.page.waitForURL(/\/account/);
  t.match(await phone.page.locator('dl').textContent(), /ada@example\.com/, 'signed in as Ada, no TOTP step');
  const session = await s.db('session').where({ method: 'passkey' }).first();
  t.ok(session, 'the session says it was a passkey');
  t.ok(session.two_factor === true || session.two_factor === 1, 'and counts as two factors (forward auth --two-factor admits it)');
  t.match(await phone.page.locator('#passkey-list').textContent(), /last used [A-Z][a-z]{2} \d/, 'last used is shown');

  // Autofill: the email field offers the passkey (conditional mediation); choosing it signs in.
  const tablet = await withAuthenticator(browser);
  await tablet.cdp.send('WebAuthn.addCredential', { authenticatorId: tablet.authenticatorId, credential: { ...(await credentialsOf(phone))[0] } });
  await tablet.page.goto(`${base}/signin`);
  await tablet.page.waitForURL(/\/account/, { timeout: 15_000 });
  t.pass('the autofill request signed in');

  // Removal: with a password, even the only passkey can go.
  await phone.page.getByRole('button', { name: /Remove the passkey/ }).click();
  await phone.page.waitForURL(/done=passkey_removed/);
  t.equal(await countRows(s, 'passkey'), 0);
  t.equal(await audited(s, 'passkey_removed'), 1);
  await screenshots(phone.page, 'account-passkey-removed');
  // The removed passkey signs in no more.
  const again = await withAuthenticator(browser);
  await signinWithoutAutofill(again.page, base);
  await again.cdp.send('WebAuthn.addCredential', { authenticatorId: again.authenticatorId, credential: { ...credential } });
  await again.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await again.page.waitForURL(/\/signin\/passkey$/);
  t.match(await again.page.getByRole('alert').first().textContent(), /not registered here/);
  await screenshots(again.page, 'signin-passkey-refused');
});

t.test('passkey-only signup; the last passkey stays until a password is set; a clone is refused', async (t) => {
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, {}, { clock });
  const browser = await launch(t);
  const a = await withAuthenticator(browser);
  await a.page.goto(`${base}/signup`);
  await a.page.getByLabel('Name', { exact: true }).fill('Grace');
  await a.page.getByLabel('Email', { exact: true }).fill('grace@example.com');
  await a.page.getByRole('button', { name: 'Create it with a passkey instead' }).click();
  await a.page.waitForURL(/\/account\?done=welcome/);
  await screenshots(a.page, 'account-passkey-only');
  const row = await s.db('user_account').where({ email: 'grace@example.com' }).first();
  t.equal(row.password, '', 'no password stored');
  // Without a password there is none to change: the section offers to set one (after a recent sign-in).
  t.equal(await a.page.locator('input[name="currentPassword"]').count(), 0, 'no change-password form without a password');

  // Eleven minutes later, adding another passkey first asks for one she has (she has no password).
  clock.advance(11 * 60 * 1000);
  await a.page.goto(`${base}/account`);
  t.equal(await a.page.getByRole('button', { name: 'Add a passkey' }).count(), 0, 'no adding without a recent sign-in');
  await screenshots(a.page, 'account-passkey-confirm');
  await a.page.getByRole('link', { name: 'Confirm it is you to add a passkey' }).click();
  await a.page.waitForURL(/\/signin\/confirm\?return=%2Faccount%23passkeys$/);
  t.equal(await a.page.getByLabel('Password').count(), 0, 'no password to ask for');
  await a.page.getByRole('button', { name: 'Use a passkey' }).click();
  await a.page.waitForURL(/\/account#passkeys$/);
  await a.page.getByRole('button', { name: 'Add a passkey' }).waitFor();
  t.pass('confirmed with her passkey, she may add another');

  // Password signin for a passkey-only account fails exactly like a wrong password.
  const wrong = await s.action('user_account', 'signin', { email: 'grace@example.com', password: PASSWORD });
  const unknown = await s.action('user_account', 'signin', { email: 'nobody@example.com', password: PASSWORD });
  t.equal(wrong.status, 401);
  t.same(wrong.body, unknown.body, 'the same answer as an unknown email');

  // The only way in cannot be removed.
  await a.page.getByRole('button', { name: /Remove the passkey/ }).click();
  t.match(await a.page.getByRole('alert').first().textContent(), /only way to sign in/);
  await screenshots(a.page, 'account-last-passkey');
  t.equal(await countRows(s, 'passkey'), 1, 'still there');
  const shell = await cli(s.dataDir, ['--json', 'user', 'passkeys', 'grace@example.com']);
  t.equal(shell.code, 0);
  const listed = shell.json.passkeys;
  t.equal(listed.length, 1);
  const refusedRemove = await cli(s.dataDir, ['user', 'passkey-remove', 'grace@example.com', listed[0].id]);
  t.equal(refusedRemove.code, 3, 'the shell is held to the same rule');
  t.match(refusedRemove.err, /only way to sign in/);

  // A clone: the same credential in a second authenticator, its counter behind the real one's.
  await a.page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await a.page.waitForURL(/\/signin/);
  // (The sign-in page's autofill request finds the passkey and signs in by itself.)
  await a.page.waitForURL(/\/account/);
  const [real] = await credentialsOf(a);
  t.ok(real.signCount > 0, 'the real authenticator counts its signatures');
  const clone = await withAuthenticator(browser);
  await signinWithoutAutofill(clone.page, base);
  await clone.cdp.send('WebAuthn.addCredential', { authenticatorId: clone.authenticatorId, credential: { ...real, signCount: 0 } });
  await clone.page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await clone.page.waitForURL(/\/signin\/passkey$/);
  t.match(await clone.page.getByRole('alert').first().textContent(), /counter went backwards/);
  t.equal(await audited(s, 'passkey_clone_suspected'), 1, 'audited as a suspected clone');
  t.match(clone.page.url(), /\/signin/, 'not signed in');

  // The shell removes it once the account has a password again.
  const set = await cli(s.dataDir, ['user', 'set-password', 'grace@example.com', '--password-stdin'], { stdin: `${PASSWORD}\n` });
  t.equal(set.code, 0, set.err);
  const removed = await cli(s.dataDir, ['--json', 'user', 'passkey-remove', 'grace@example.com', listed[0].id]);
  t.equal(removed.code, 0, removed.err);
  t.equal(await countRows(s, 'passkey'), 0);
  t.ok(tokenOf(await s.action('user_account', 'signin', { email: 'grace@example.com', password: PASSWORD })), 'and the password signs in');
});
