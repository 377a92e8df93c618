// Pages and mails in the reader's language, in Chromium: English, German and French chosen by
// Accept-Language (its q-values), then by the choice on /account kept with the account; `lang`
// and `dir` on <html>; the sign-in, signup and account pages at 360 and 1280 px in de and fr
// without anything leaving its box; an operator's override holding markup shown as text; the
// language form refused without its CSRF token; mails in the account's language through a real
// SMTP server.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';
import { startSmtp } from '../helpers/smtp';
import { loadConfig } from '../../src/config';
import { openCore } from '../../src/core';

async function setUp(t: Parameters<typeof startTestServer>[0], flags: Record<string, string> = {}) {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url, ...flags });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('ada@example.com');
  const browser = await launch(t);
  return { s, smtp, browser };
}

const lang = (html: string) => /<html lang="([^"]+)" dir="([^"]+)">/.exec(html)?.slice(1);

t.test('Accept-Language picks the language by its q-values; the default is English', async (t) => {
  const { s } = await setUp(t);
  const cases: Array<[string | null, string, string]> = [
    [null, 'en', 'Sign in'],
    ['de-DE,de;q=0.9,en;q=0.8', 'de', 'Anmelden'],
    ['fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7', 'fr', 'Connexion'],
    ['en;q=0.5, de;q=0.9', 'de', 'Anmelden'],
    ['de;q=0.2, fr;q=0.8', 'fr', 'Connexion'],
    ['es, it', 'en', 'Sign in'],
    ['*', 'en', 'Sign in'],
  ];
  for (const [header, want, title] of cases) {
    const r = await fetch(`${s.url}/signin`, { headers: header ? { 'accept-language': header } : {} });
    const body = await r.text();
    t.same(lang(body), [want, 'ltr'], `${header ?? '(none)'} → ${want}`);
    t.match(body, `<title>${title} · Gatehouse</title>`);
  }
});

t.test('pages in de and fr at 360 and 1280 px; the choice on /account wins over the browser and reaches the mails', async (t) => {
  const { s, smtp, browser } = await setUp(t);
  // Signup's confirmation mail, before any choice: English (the server's default).
  t.match((await smtp.next('ada@example.com', 1)).text, 'Hello ada,');
  for (const language of ['de', 'fr'] as const) {
    const context = await browser.newContext({ locale: language, extraHTTPHeaders: { 'accept-language': language } });
    const page = await context.newPage();
    await page.goto(`${s.url}/signin`);
    t.equal(await page.getAttribute('html', 'lang'), language);
    t.equal(await page.getAttribute('html', 'dir'), 'ltr');
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `/signin in ${language} at ${width} px`);
    }
    await screenshots(page, `signin-${language}`);
    await page.goto(`${s.url}/signup`);
    t.equal(await page.getAttribute('html', 'lang'), language);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `/signup in ${language} at ${width} px`);
    }
    await screenshots(page, `signup-${language}`);
    await page.goto(`${s.url}/signin`);
    await page.getByLabel(language === 'de' ? 'E-Mail-Adresse' : 'Adresse e-mail', { exact: true }).fill('ada@example.com');
    await page.getByLabel(language === 'de' ? 'Passwort' : 'Mot de passe', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: language === 'de' ? 'Anmelden' : 'Se connecter', exact: true }).click();
    await page.waitForURL(/\/account/);
    t.equal(await page.getAttribute('html', 'lang'), language, '/account as the browser asks');
    t.equal(await page.locator('h1').textContent(), language === 'de' ? 'Ihr Konto' : 'Votre compte');
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `/account in ${language} at ${width} px`);
    }
    await screenshots(page, `account-${language}`);
    await page.goto(`${s.url}/signout`).catch(() => undefined);
    await context.close();
  }

  // An English browser; the account chooses German on /account: every page follows, and its mails.
  const page = await (await browser.newContext({ extraHTTPHeaders: { 'accept-language': 'en-US,en;q=0.9' } })).newPage();
  await page.goto(`${s.url}/signin`);
  t.equal(await page.getAttribute('html', 'lang'), 'en');
  await fillSignin(page, 'ada@example.com');
  await page.waitForURL(/\/account/);
  t.equal(await page.getAttribute('html', 'lang'), 'en');
  await page.locator('#f-language').selectOption('de');
  await page.getByRole('button', { name: 'Save language' }).click();
  await page.waitForURL(/done=language/);
  t.equal(await page.getAttribute('html', 'lang'), 'de', 'the page after the choice speaks it');
  t.match(await page.locator('.notice.success').textContent(), 'Sprache gespeichert.');
  t.equal(await page.locator('#f-language').inputValue(), 'de', 'the choice is shown as kept');
  await page.goto(`${s.url}/account`);
  t.equal(await page.locator('nav[aria-label="Konto"] a[href="/account"]').textContent(), 'Konto', 'the layout too');

  // The mail to the account, in its language.
  await s.action('user_account', 'reset_password_request', { email: 'ada@example.com' });
  const mail = await smtp.next('ada@example.com', 2);
  t.match(mail.raw, /Subject: =\?UTF-8\?Q\?Passwort_zur=C3=BCcksetzen\?=|Subject: Passwort zurücksetzen/, 'the subject in German');
  // The sink undoes quoted-printable byte by byte: read its bytes as the UTF-8 they are.
  const text = Buffer.from(mail.text, 'latin1').toString('utf8');
  t.match(text, 'Hallo ada,');
  t.match(text, 'Jemand (hoffentlich Sie) möchte das Passwort Ihres Kontos zurücksetzen.');
  t.match(text, /Der Link funktioniert nur einmal und ist \d+ (Minuten|Stunden?|Tage?) lang gültig\./, 'the duration in German words');

  // Back to "as my browser asks".
  await page.locator('#f-language').selectOption('');
  await page.getByRole('button', { name: 'Sprache speichern' }).click();
  await page.waitForURL(/done=language/);
  t.equal(await page.getAttribute('html', 'lang'), 'en');
  const rows = await s.db('audit_event').where({ event: 'language_changed' }).count({ n: '*' }).first();
  t.equal(Number(rows?.n), 2, 'each change audited');

  // CSRF: the form posted without its token (same site, the session cookie sent) is refused, the choice unchanged.
  const refused = await page.evaluate(async () => {
    const r = await fetch('/account/language', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'language=fr',
      redirect: 'manual',
    });
    return r.status;
  });
  t.equal(refused, 403, 'refused without the CSRF token');
  await page.goto(`${s.url}/account`);
  t.equal(await page.getAttribute('html', 'lang'), 'en', 'the choice unchanged');

  // An outside finding: a repeated field (language=de&language=fr) cleared the choice and said it was saved.
  await page.locator('#f-language').selectOption('fr');
  await page.getByRole('button', { name: 'Save language' }).click();
  await page.waitForURL(/done=language/);
  // Run in the page (a string: the tests compile without the DOM's types).
  const twice = (await page.evaluate(`(async () => {
    const csrf = document.querySelector('input[name="csrf"]').value;
    const r = await fetch('/account/language', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=' + encodeURIComponent(csrf) + '&language=de&language=en',
      redirect: 'manual',
    });
    return r.status;
  })()`)) as number;
  t.equal(twice, 400, 'two languages at once are refused');
  await page.goto(`${s.url}/account`);
  t.equal(await page.getAttribute('html', 'lang'), 'fr', 'and the choice is kept');
});

t.test("an operator's override is text: markup in it shows escaped", async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'messages.yaml');
  fs.writeFileSync(file, `fr:\n  signin.title: "<img src=x onerror=alert(1)> Accès <b>maison</b>"\nen:\n  signin.forgot: Lost it? Ask the help desk\n`);
  const { s, browser } = await setUp(t, { messages: file });
  const raw = await (await fetch(`${s.url}/signin`, { headers: { 'accept-language': 'fr' } })).text();
  t.notMatch(raw, '<img src=x', 'no markup from the override');
  t.match(raw, '&lt;img src=x onerror=alert(1)&gt; Accès &lt;b&gt;maison&lt;/b&gt;');
  const page = await (await browser.newContext({ extraHTTPHeaders: { 'accept-language': 'fr' } })).newPage();
  await page.goto(`${s.url}/signin`);
  t.equal(await page.locator('h1').textContent(), '<img src=x onerror=alert(1)> Accès <b>maison</b>', 'shown as the text it is');
  t.equal(await page.locator('main img').count(), 0);
  const en = await (await fetch(`${s.url}/signin`)).text();
  t.match(en, 'Lost it? Ask the help desk', 'an English override');

  // A key no catalogue has, or a language Gatehouse does not ship, is refused at start.
  fs.writeFileSync(file, `de:\n  signin.titel: Anmeldung\n`);
  const config = loadConfig({ messages: file, dataDir: tempDir(t) }, {});
  await t.rejects(openCore(config), { message: /de\.signin\.titel is not a message/ });
  fs.writeFileSync(file, `es:\n  signin.title: Entrar\n`);
  t.throws(() => loadConfig({ messages: file }, {}), { message: /"es" is not a language/ });
  t.throws(() => loadConfig({ defaultLanguage: 'es' }, {}), { message: /must be one of en, de, fr/ });
});

t.test('--default-language: a browser that asks for nothing shipped gets it', async (t) => {
  const { s } = await setUp(t, { defaultLanguage: 'fr' });
  t.same(lang(await (await fetch(`${s.url}/signin`, { headers: { 'accept-language': 'es' } })).text()), ['fr', 'ltr']);
  t.same(lang(await (await fetch(`${s.url}/signin`, { headers: { 'accept-language': 'de' } })).text()), ['de', 'ltr']);
});
