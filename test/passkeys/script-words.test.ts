// The passkey script's own words come from the page, in the reader's language: opened at an
// address where passkeys cannot work (an IP address: no relying-party id), the sign-in page's
// passkey button says so in German and French, naming the address, and in English as before.
import t from 'tap';
import { launch } from '../helpers/browser';
import { passkeyServer } from '../helpers/passkeys';

t.test('the passkey error line in en, de and fr', async (t) => {
  const { base } = await passkeyServer(t);
  const ip = base.replace('localhost', '127.0.0.1');
  const host = new URL(ip).host;
  const browser = await launch(t);
  const wanted = {
    en: `Passkeys cannot be used at ${host}`,
    de: `Passkeys können unter ${host} nicht verwendet werden`,
    fr: `Les clés d’accès ne peuvent pas être utilisées à l’adresse ${host}`,
  };
  for (const [lang, words] of Object.entries(wanted)) {
    const context = await browser.newContext({ locale: lang, extraHTTPHeaders: { 'accept-language': lang } });
    const page = await context.newPage();
    await page.goto(`${ip}/signin`);
    await page.locator('form[data-passkey="signin"] button[type=submit]').click();
    const line = page.locator('form[data-passkey="signin"] [data-passkey-error]');
    await line.waitFor();
    t.match(await line.textContent(), words, `${lang}: ${words}`);
    await context.close();
  }
});
