// The pages around sign-in in German and French, in Chromium: the password reset request and
// reset pages, the email confirmation page, the TOTP code step, the device flow's pages (the code,
// the app to confirm, connected) with the OpenID Connect consent page of a third-party client, and
// a provider sign-in's refusal. On each: nothing left in English (englishLeft), nothing leaving its
// box at 360 and 1280 px, and screenshots (test-results/pages/side-<page>-<language>-<width>.png).
// A refusal the page knows (a used link, a wrong code, an expired provider sign-in) is said in the
// reader's language too.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { englishLeft, launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { providerWith } from '../helpers/oidc';
import { PASSWORD } from '../helpers/server';

/** The page in this language: no English, nothing out of its box at either width, its screenshots. */
async function looked(t: Test, page: Page, language: string, name: string): Promise<void> {
  t.equal(await page.getAttribute('html', 'lang'), language, `${name}: drawn in ${language}`);
  t.same(await englishLeft(page), [], `${name} in ${language}: nothing in English`);
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    t.same(await outsideItsBox(page), [], `${name} in ${language} at ${width} px`);
  }
  await screenshots(page, `side-${name}-${language}`);
}

const WORDS = {
  de: {
    invalidReset: 'Der Link zum Zurücksetzen ist ungültig',
    wrongCode: 'Der Code ist falsch',
    connected: 'Gerät verbunden',
    expired: 'Diese Anmeldung ist abgelaufen',
  },
  fr: {
    invalidReset: 'Le lien de réinitialisation n’est pas valide',
    wrongCode: 'Le code est erroné',
    connected: 'Appareil connecté',
    expired: 'Cette connexion a expiré',
  },
} as const;

t.test('the pages around sign-in in de and fr: no English left, nothing out of its box', async (t) => {
  const s = await providerWith(t, 'ada@example.com', 'tom@example.com');
  // Tom has TOTP: his password leads to the code step.
  const clock = manualClock();
  const tom = await s.signin('tom@example.com');
  const secret: string = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, tom)).body[0].Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, tom)).status, 200);
  const added = await cli(s.dataDir, ['provider', 'add', '--name', 'corp', '--issuer', 'http://127.0.0.1:9', '--client-id', 'c', '--client-secret-env', 'S'], {
    env: { S: 'x' },
  });
  t.equal(added.code, 0, added.err);
  const browser = await launch(t);

  for (const language of ['de', 'fr'] as const) {
    const words = WORDS[language];
    const context = await browser.newContext({ locale: language, extraHTTPHeaders: { 'accept-language': language } });
    const page = await context.newPage();

    // Password reset: the request, its answer, the new password with a link that is no good.
    await page.goto(`${s.url}/reset-password`);
    await looked(t, page, language, 'reset-request');
    await page.locator('#f-email').fill('ada@example.com');
    await page.locator('form[action="/reset-password/request"] button[type=submit]').click();
    await page.locator('.notice.info').waitFor();
    await looked(t, page, language, 'reset-requested');
    await page.goto(`${s.url}/reset-password#token=${'x'.repeat(43)}`);
    await looked(t, page, language, 'reset-choose');
    await page.locator('#f-password').fill('a new password, long enough');
    await page.locator('#f-passwordConfirm').fill('a new password, long enough');
    await page.locator('form[action="/reset-password"] button[type=submit]').click();
    t.match(await page.getByRole('alert').textContent(), words.invalidReset, 'a used link, in the page’s words');
    await looked(t, page, language, 'reset-refused');

    // The email confirmation link.
    await page.goto(`${s.url}/verify-email#token=${'x'.repeat(43)}`);
    await looked(t, page, language, 'verify-email');

    // The TOTP code step after Tom's password, and a wrong code on it.
    await page.goto(`${s.url}/signin`);
    await page.locator('#f-email').fill('tom@example.com');
    await page.locator('#f-password').fill(PASSWORD);
    await page.locator('form[action="/signin"] button[type=submit]').click();
    await page.locator('#f-otp').waitFor();
    await looked(t, page, language, 'code-step');
    await page.locator('#f-otp').fill('000000');
    await page.locator('form[action="/signin/code"] button[type=submit]').click();
    t.match(await page.getByRole('alert').textContent(), words.wrongCode);
    await looked(t, page, language, 'code-step-refused');

    // The device flow: the code page, a wrong code, the app to confirm, sign-in, consent, connected
    // (a client of its own in each language: Ada's consent is kept per client).
    const tv = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Kiosk', '--device', '--public'])).json as { client_id: string };
    const r = await fetch(`${s.config.publicUrl}/oidc/device/auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: tv.client_id, scope: 'openid email profile groups offline_access' }),
    });
    const device = (await r.json()) as { user_code: string; verification_uri: string };
    await page.goto(device.verification_uri);
    await looked(t, page, language, 'device-code');
    await page.locator('#f-user_code').fill('BBBB-BBBB');
    await page.locator('#device-code button[type=submit]').click();
    await page.getByRole('alert').waitFor();
    await looked(t, page, language, 'device-code-refused');
    await page.locator('#f-user_code').fill(device.user_code);
    await page.locator('#device-code button[type=submit]').click();
    await page.locator('#user-code').waitFor();
    await looked(t, page, language, 'device-confirm');
    await page.locator('button[autofocus]').click();
    await page.locator('#f-email').fill('ada@example.com');
    await page.locator('#f-password').fill(PASSWORD);
    await page.locator('form[action="/signin"] button[type=submit]').click();
    await page.locator('form[action$="/consent"]').waitFor();
    await looked(t, page, language, 'consent');
    await page.locator('form[action$="/consent"] button[type=submit]').click();
    await page.getByRole('heading', { name: words.connected }).waitFor();
    await looked(t, page, language, 'device-connected');

    // A provider sign-in that comes back with no flow of this browser.
    await page.goto(`${s.url}/signin/provider/corp/callback?state=nothing&code=nothing`);
    t.match(await page.getByRole('alert').textContent(), words.expired);
    await looked(t, page, language, 'provider-refused');
    await context.close();
  }
});
