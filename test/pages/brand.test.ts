// The operator's look (--brand-name, --brand-logo, --brand-color, --brand-css) in Chromium: the
// name and logo in every page's header, the logo served at its fixed path with the type its
// content was checked to be, a logo that is really HTML (or an SVG with script) refused at start,
// and a brand stylesheet that tries to load from another origin blocked by the pages' CSP.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { startTestServer, tempDir } from '../helpers/server';
import { loadConfig } from '../../src/config';

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="14" fill="#7a1fa2"/></svg>`;
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cf000000020101009a1b0d0a0000000049454e44ae426082',
  'hex',
);

/** A server on another origin that counts what the browser asks of it. */
async function elsewhere(t: Parameters<typeof startTestServer>[0]) {
  const asked: string[] = [];
  const srv = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(PNG);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  return { origin: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, asked };
}

t.test('name, logo, colour and stylesheet on the pages; the CSP blocks what the stylesheet loads from elsewhere', async (t) => {
  const dir = tempDir(t);
  const other = await elsewhere(t);
  fs.writeFileSync(path.join(dir, 'logo.svg'), LOGO);
  fs.writeFileSync(
    path.join(dir, 'brand.css'),
    `header { border-bottom: 4px solid var(--accent); }\nbody { background-image: url(${other.origin}/tracker.png); }\n@import url("${other.origin}/more.css");\n`,
  );
  const s = await startTestServer(t, {
    brandName: 'Acme Sign-in',
    brandLogo: path.join(dir, 'logo.svg'),
    brandColor: '#7A1FA2',
    brandCss: path.join(dir, 'brand.css'),
  });

  const logo = await fetch(`${s.url}/assets/brand-logo`);
  t.equal(logo.status, 200);
  t.equal(logo.headers.get('content-type'), 'image/svg+xml', 'the type its content was checked to be');
  t.equal(logo.headers.get('x-content-type-options'), 'nosniff');
  t.match(logo.headers.get('content-security-policy'), /default-src 'none'.*sandbox/, 'an SVG opened alone runs nothing');
  t.equal(await logo.text(), LOGO);
  const css = await fetch(`${s.url}/assets/brand.css`);
  t.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
  t.equal(css.headers.get('x-content-type-options'), 'nosniff');
  const colour = await (await fetch(`${s.url}/assets/brand-color.css`)).text();
  t.match(colour, '--accent: #7a1fa2', 'the colour, checked and lowercased');

  const signin = await fetch(`${s.url}/signin`);
  t.equal(signin.headers.get('content-security-policy'), "default-src 'self'; frame-ancestors 'none'; base-uri 'none'", 'the pages’ CSP unchanged');

  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  const blocked: string[] = [];
  // The browser's report that the CSP refused the stylesheet's load from the other origin.
  const reported = page.waitForEvent('console', (m) => /Content Security Policy/i.test(m.text()) && m.text().includes(other.origin));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
  });
  await page.goto(`${s.url}/signin`);
  t.equal(await page.title(), 'Sign in · Acme Sign-in');
  t.equal(await page.locator('header .brand-name').textContent(), 'Acme Sign-in');
  const img = page.locator('header img.brand-logo');
  t.match(await img.getAttribute('src'), /^\/assets\/brand-logo\?v=\d+$/);
  t.equal(await page.evaluate(`document.querySelector('header img.brand-logo').naturalWidth > 0`), true, 'the logo loads');
  const accent = await page.evaluate(`getComputedStyle(document.querySelector('button[type=submit]')).backgroundColor`);
  t.equal(accent, 'rgb(122, 31, 162)', 'the accent colour on the buttons');
  const border = await page.evaluate(`getComputedStyle(document.querySelector('header')).borderBottomWidth`);
  t.equal(border, '4px', 'the brand stylesheet applies');
  await reported;
  t.same(other.asked, [], 'nothing was fetched from the other origin');
  t.ok(
    blocked.some((m) => m.includes(other.origin)),
    `the browser reports the CSP blocking it (${blocked.length} reports)`,
  );
  t.same(await outsideItsBox(page), []);
  await screenshots(page, 'brand-signin');
});

t.test('a logo that is not a PNG or a clean SVG is refused at start, with the reason', async (t) => {
  const dir = tempDir(t);
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['page.svg', '<!doctype html><html><body><script>alert(1)</script></body></html>', /DOCTYPE|not well-formed|root/],
    ['html.png', '<html><script>alert(1)</script></html>', /not well-formed|root/],
    ['script.svg', `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`, /<script>/],
    ['onload.svg', `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>`, /event handler \(onload\)/],
    [
      'foreign.svg',
      `<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>`,
      /foreignObject/,
    ],
    [
      'outside.svg',
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="https://evil.test/x.svg#a"/></svg>`,
      /<use>/,
    ],
    ['style.svg', `<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: url(https://evil.test/p)" width="1" height="1"/></svg>`, /outside it/],
    ['big.png', Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(300 * 1024)]), /at most 262144/],
    // An outside finding: a CSS escape spelled url and @import past the check, and image-set() was not named.
    ['escaped-url.svg', `<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: u\\rl(https://evil.test/p)" width="1" height="1"/></svg>`, /outside it/],
    ['escaped-import.svg', `<svg xmlns="http://www.w3.org/2000/svg"><style>@\\import "https://evil.test/x.css";</style></svg>`, /outside it/],
    [
      'image-set.svg',
      `<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: image-set('https://evil.test/p' 1x)" width="1" height="1"/></svg>`,
      /outside it/,
    ],
  ];
  for (const [name, content, why] of cases) {
    fs.writeFileSync(path.join(dir, name), content);
    t.throws(() => loadConfig({ brandLogo: path.join(dir, name) }, {}), { code: 'invalid_input', message: why }, name);
  }
  // And a reference inside the file, quoted or spaced, is no reference outside it (it was refused).
  const inside = `<svg xmlns="http://www.w3.org/2000/svg"><defs><linearGradient id="g"><stop offset="0"/></linearGradient></defs><rect fill="url('#g')" width="1" height="1"/><rect fill="url( #g)" width="1" height="1"/></svg>`;
  fs.writeFileSync(path.join(dir, 'inside.svg'), inside);
  t.equal(loadConfig({ brandLogo: path.join(dir, 'inside.svg') }, {}).brandLogo?.type, 'image/svg+xml', "url('#g') and url( #g) are the file's own");
  fs.writeFileSync(path.join(dir, 'ok.png'), PNG);
  t.equal(loadConfig({ brandLogo: path.join(dir, 'ok.png') }, {}).brandLogo?.type, 'image/png', 'a PNG by its magic bytes');
  // An outside finding: a right-to-left override (or a line separator) in the name showed reversed on every page.
  const unshown: Array<[string, string]> = [
    ['Bank\u202eevil', 'a right-to-left override'],
    ['Two\u2028lines', 'a line separator'],
    ['Zero\u200bwidth', 'a zero-width space'],
    ['New\nline', 'a new line'],
  ];
  for (const [bad, what] of unshown) t.throws(() => loadConfig({ brandName: bad }, {}), { message: /one line, without invisible/ }, what);
  t.equal(loadConfig({ brandName: 'Société Générale · Cloud' }, {}).brandName, 'Société Générale · Cloud');
  t.throws(() => loadConfig({ brandColor: 'red' }, {}), { message: /#RRGGBB/ });
  t.throws(() => loadConfig({ brandColor: '#12345g' }, {}), { message: /#RRGGBB/ });
  fs.writeFileSync(path.join(dir, 'big.css'), 'a{}'.repeat(30000));
  t.throws(() => loadConfig({ brandCss: path.join(dir, 'big.css') }, {}), { message: /at most 65536/ });
});
