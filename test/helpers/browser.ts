/**
 * A real browser for the pages: Debian's Chromium (/usr/bin/chromium, installed by .ci/run)
 * driven by playwright-core, never a downloaded browser. Screenshots go to test-results/pages/.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ENGLISH_SOURCE } from './english';
import type { Test } from 'tap';

export const CHROMIUM = process.env.GATEHOUSE_TEST_CHROMIUM || '/usr/bin/chromium';
export const SCREENS = path.join(__dirname, '..', '..', 'test-results', 'pages');

export async function launch(t: Test, extraArgs: readonly string[] = []): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
  // A function given to evaluate() reaches the page as its source text. tsx, which loads the
  // tests, compiles them with esbuild's keepNames: a function named inside one (const f = () => …)
  // calls esbuild's __name helper, which a page does not have. Each context gets a no-op one.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    await context.addInitScript('globalThis.__name ??= (fn) => fn;');
    return context;
  };
  t.teardown(() => browser.close());
  return browser;
}

/** A free port, so the server's --public-url (and the links in its mails) can name it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** The page at phone (360 px) and desktop (1280 px) width, saved as <name>-360.png and <name>-1280.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENS, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(SCREENS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
}

/**
 * Buttons, cells, inputs, selects and links of a page's main part that leave their section, or a
 * page that scrolls sideways: what a phone-width layout must not do. Run in the page (a string:
 * the tests compile without the DOM's types).
 */
export const outsideItsBox = (page: Page) =>
  page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const bad = [];
    if (document.documentElement.scrollWidth > width) bad.push('the page scrolls sideways (' + document.documentElement.scrollWidth + ' > ' + width + ')');
    for (const el of document.querySelectorAll('main button, main td, main input, main select, main a')) {
      const r = el.getBoundingClientRect();
      const section = el.closest('section');
      if (r.width === 0 || !section) continue;
      const box = section.getBoundingClientRect();
      if (r.right > box.right + 1 || r.left < box.left - 1) bad.push(el.tagName + ' "' + (el.textContent || el.value || '').trim().slice(0, 30) + '" leaves its box');
    }
    return bad;
  })()`) as Promise<string[]>;

/**
 * Text a page drawn in German or French still shows in English: visible text nodes, button and
 * input labels, placeholders and titles holding a word neither language uses. Values a person or
 * an administrator typed (names, addresses, client names) are not the page's words: put them in
 * an element with `translate="no"` (or <code>, <kbd>), which this skips. An empty list: nothing
 * left in English.
 */
export const englishLeft = (page: Page) =>
  page.evaluate(`(() => {
    const english = new RegExp(${JSON.stringify(ENGLISH_SOURCE)}, 'iu');
    const skip = (el) => !el || el.closest('script, style, code, kbd, pre, [translate="no"], [hidden]') !== null;
    const found = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent.trim();
      if (text && english.test(text) && !skip(n.parentElement)) found.push(text.slice(0, 80));
    }
    for (const el of document.querySelectorAll('[placeholder], [title], [aria-label], input[type=submit], input[type=button]')) {
      if (skip(el)) continue;
      for (const v of [el.getAttribute('placeholder'), el.getAttribute('title'), el.getAttribute('aria-label'), el.type === 'submit' || el.type === 'button' ? el.value : null]) {
        if (v && english.test(v)) found.push(v.slice(0, 80));
      }
    }
    return [...new Set(found)];
  })()`) as Promise<string[]>;

/** A new browser that asks for `language`, signed in at `base` with the password: on /account. */
export async function signedInIn(browser: Browser, base: string, language: string, email: string, password: string): Promise<Page> {
  const context = await browser.newContext({ locale: language, extraHTTPHeaders: { 'accept-language': language } });
  const page = await context.newPage();
  await page.goto(`${base}/signin`);
  await page.locator('#f-email').fill(email);
  await page.locator('#f-password').fill(password);
  await page.locator('form[action="/signin"] button[type="submit"]').click();
  await page.waitForURL(/\/account/);
  return page;
}
