// The console's look page (/admin/look) in Chromium: the name and the accent colour changed there
// show on /signin at once; a bad colour is refused in the reader's language and nothing is kept;
// the form posted without its CSRF token is refused; a setting a flag gives is shown with the flag
// and has no field; the page at 360 and 1280 px in en, de and fr, nothing outside its box and no
// English left on the German and French ones.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { englishLeft, launch, outsideItsBox, screenshots } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { startTestServer, tempDir } from '../helpers/server';

const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#7a1fa2"/></svg>';

async function setUp(t: Parameters<typeof startTestServer>[0], flags: Record<string, string> = {}) {
  const s = await startTestServer(t, flags);
  await s.signup('admin@example.com');
  const browser = await launch(t);
  const adminPage = async (lang = 'en') => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${s.url}/signin`);
    await fillSignin(page, 'admin@example.com');
    await page.waitForURL(/\/account/);
    // Signed in in English (the helper fills the English form), then read in the reader's language.
    await page.setExtraHTTPHeaders({ 'accept-language': lang });
    return page;
  };
  return { s, browser, adminPage };
}

t.test('the name and the colour changed on the console show on /signin; bad input and a missing CSRF token are refused', async (t) => {
  const { s, browser, adminPage } = await setUp(t);
  const page = await adminPage();
  await page.goto(`${s.url}/admin/look`);
  t.equal(await page.locator('h1').textContent(), 'Look');
  t.match(await page.locator('#look-logo').textContent(), 'No logo');
  await page.getByLabel('Product name').fill('Acme Sign-in');
  await page.getByLabel('Accent colour').fill('#7A1FA2');
  await page.getByLabel('Default language').selectOption('fr');
  await page.getByRole('button', { name: 'Save the look' }).click();
  await page.waitForURL(/done=look_changed/);
  t.match(await page.locator('.notice.success').textContent(), 'The look is saved');
  t.equal(await page.getByLabel('Product name').inputValue(), 'Acme Sign-in');

  // A guest's browser sees them on /signin.
  const guest = await (await browser.newContext()).newPage();
  await guest.goto(`${s.url}/signin`);
  t.equal(await guest.locator('header .brand-name').textContent(), 'Acme Sign-in');
  t.equal(await guest.title(), 'Sign in · Acme Sign-in', 'an English browser reads English');
  const asked = await (await fetch(`${s.url}/signin`)).text();
  t.match(asked, '<html lang="fr" dir="ltr">', 'a reader who names no language gets the default: French now');
  const accent = await guest.evaluate(`getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor`);
  t.equal(accent, 'rgb(122, 31, 162)', 'the accent colour on the buttons');
  const audit = await s.db('audit_event').where({ event: 'look_changed' }).count({ n: '*' }).first();
  t.equal(Number(audit?.n), 1, 'the change audited');

  // A bad colour: refused with the field named, nothing of the form kept (the name neither).
  await page.getByLabel('Product name').fill('Not Kept');
  await page.getByLabel('Accent colour').fill('purple');
  await page.evaluate(`document.querySelector('#f-brand_color').removeAttribute('pattern')`);
  await page.getByRole('button', { name: 'Save the look' }).click();
  t.match(await page.locator('.notice.error').textContent(), 'The accent colour must be written as #RRGGBB');
  await guest.reload();
  t.equal(await guest.locator('header .brand-name').textContent(), 'Acme Sign-in', 'nothing of the refused form kept');

  // CSRF: posted without its token (same site, the session cookie sent), refused, the name unchanged.
  const refused = await page.evaluate(async () => {
    const r = await fetch('/admin/look', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'brand_name=Forged&default_language=en',
      redirect: 'manual',
    });
    return r.status;
  });
  t.equal(refused, 403, 'refused without the CSRF token');
  await guest.reload();
  t.equal(await guest.locator('header .brand-name').textContent(), 'Acme Sign-in', 'the name unchanged');
});

t.test('a flag wins: its setting is shown with the flag, without a field; the page in en, de and fr at 360 and 1280 px', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'logo.svg'), LOGO);
  const { s, adminPage } = await setUp(t, { brandColor: '#00695c', brandLogo: path.join(dir, 'logo.svg') });
  for (const lang of ['en', 'de', 'fr']) {
    const page = await adminPage(lang);
    await page.goto(`${s.url}/admin/look`);
    t.equal(await page.getAttribute('html', 'lang'), lang);
    t.equal(await page.locator('#f-brand_color').count(), 0, 'no field for what the flag sets');
    t.match(await page.locator('#look-color').textContent(), '--brand-color');
    t.match(await page.locator('#look-logo').textContent(), 'SVG');
    t.equal(await page.evaluate(`document.querySelector('#look-logo img').naturalWidth > 0`), true, 'the logo shows');
    await screenshots(page, `admin-look-${lang}`);
    t.same(await outsideItsBox(page), [], `${lang}: nothing outside its box`);
    if (lang !== 'en') {
      // The console's navigation is the kit's (English for now); the page's own words are the reader's.
      const left = (await englishLeft(page)).filter(
        (w: string) => !/Accounts|Invitations|Groups|OIDC|SAML|Provisioning|Directory|Apps|Webhooks|Signup|Look|Keys|Audit|Sign out|Account/.test(w),
      );
      t.same(left, [], `${lang}: no English left on the page's own words`);
    }
  }
  // A post naming what the flag sets is refused, as the page says.
  const page = await adminPage();
  await page.goto(`${s.url}/admin/look`);
  const csrf = await page.locator('input[name=csrf]').first().inputValue();
  const r = await page.evaluate(async (token: string) => {
    const res = await fetch('/admin/look', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(token)}&brand_color=%23000000`,
    });
    return { status: res.status, text: await res.text() };
  }, csrf);
  t.equal(r.status, 409);
  t.match(r.text, 'is set by a flag given to the server');
});
