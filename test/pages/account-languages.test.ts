// The account page in English, German and French, in Chromium: an account that signs in with a
// password (no passkey), two-factor authentication off, an API key, an SSH key and a second
// session on another device. In German and French nothing is left in English (englishLeft), a
// success message included; nothing leaves its box at 360 and 1280 px; times are written as the
// reader's locale writes them; an API key made on the page and two-factor authentication being set
// up answer in the same language. Screenshots account-<lang>-360.png and -1280.png.
import t from 'tap';
import { englishLeft, launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { PASSWORD, setSignup, withAdmin } from '../helpers/server';
import de from '../../src/i18n/de.json';
import en from '../../src/i18n/en.json';
import fr from '../../src/i18n/fr.json';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3/+bUL3vO5SYk1wD1s1QLdjVI1nOqGCqsRnCPsbdKx ada@laptop';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CATALOGUES = { en, de, fr };

/** How each language writes a session's sign-in time (Intl's medium date, short time, UTC). */
const SIGNED_IN: Record<keyof typeof CATALOGUES, RegExp> = {
  en: /signed in [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d\s[AP]M UTC with password/,
  de: /angemeldet am \d\d\.\d\d\.\d{4}, \d\d:\d\d UTC mit Passwort/,
  fr: /connecté le \d{1,2} \S+ \d{4}, \d\d:\d\d UTC avec mot de passe/,
};

t.test('/account in en, de and fr: every word in the reader’s language, nothing out of its box', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const made = await cli(s.dataDir, ['user', 'api-key', 'add', 'ada@example.com', '--name', 'backup job', '--expires', '90d']);
  t.equal(made.code, 0, made.err);
  t.equal((await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ada@example.com', '-'], { stdin: KEY })).code, 0);
  // Another device, signed in over the API: a session the page offers to sign out.
  await s.call('POST', '/action/user_account/signin', {
    body: { attributes: { email: 'ada@example.com', password: PASSWORD } },
    headers: { 'user-agent': FIREFOX },
  });

  const browser = await launch(t);
  for (const language of ['en', 'de', 'fr'] as const) {
    const words = CATALOGUES[language];
    const context = await browser.newContext({ locale: language, extraHTTPHeaders: { 'accept-language': language } });
    const page = await context.newPage();
    await page.goto(`${s.config.publicUrl}/signin`);
    await page.getByLabel(words['signin.email'], { exact: true }).fill('ada@example.com');
    await page.getByLabel(words['signin.password'], { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: words['signin.submit'], exact: true }).click();
    await page.waitForURL(/\/account/);
    // A success message too: the page's own, in the reader's language.
    await page.goto(`${s.config.publicUrl}/account?done=ssh_key_added`);
    t.equal(await page.getAttribute('html', 'lang'), language);
    t.equal(await page.locator('.notice.success').textContent(), words['pages.done.ssh_key_added']);
    t.equal(await page.locator('#h-totp').textContent(), words['account.totp'], 'two-factor authentication offered (off)');
    t.match(await page.locator('#two-factor').textContent(), words['account.totp.off']);
    t.match(await page.locator('#sessions').textContent(), SIGNED_IN[language], 'how and when, in the reader’s words');
    t.match(await page.locator('#api-key-list').textContent(), 'backup job');
    t.match(await page.locator('#ssh-key-list').textContent(), 'SHA256:UcEg4o3mS1feePhf8Lf2dPFXUWJtc9ViJjnY7Rza1AA');
    if (language !== 'en') t.same(await englishLeft(page), [], `nothing left in English in ${language}`);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `/account in ${language} at ${width} px`);
    }
    await screenshots(page, `account-${language}`);

    // The answers of two forms, in the same words: an API key made (shown once), TOTP being set up.
    await page.getByLabel(words['account.api_keys.which']).fill(`deploy ${language}`);
    await page.getByRole('button', { name: words['account.api_keys.make'] }).click();
    t.match(await page.locator('#api-keys .notice.success').textContent(), `deploy ${language}`);
    if (language !== 'en') t.same(await englishLeft(page), [], `the new API key's page in ${language}`);
    await page.locator('#two-factor').getByLabel(words['account.password'], { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: words['account.totp.set_up'] }).click();
    await page.locator('#totp-secret').waitFor();
    if (language !== 'en') t.same(await englishLeft(page), [], `two-factor authentication being set up in ${language}`);
    await page.setViewportSize({ width: 360, height: 800 });
    t.same(await outsideItsBox(page), [], `the set-up at 360 px in ${language}`);
    await context.close();
  }
});
