// The pages' layout where issue 58 (item 14) found it wanting, in Chromium at 390 and 1280 px:
// the account page's contents (a labelled nav of links to each section's id) beside two columns
// on a wide screen; the SAML refusal page's header offers an administrator the console; the SAML
// console's URLs wrap after a slash, not mid-word; a row's Remove box sits above its own button.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { addSp, nodeSamlSp } from '../helpers/saml';
import { setSignup, withAdmin } from '../helpers/server';

const LONG_ENTITY = 'https://wiki.example.test/saml/metadata/a-rather-long-entity-identifier';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  await cli(s.dataDir, ['group', 'create', 'staff']);
  const sp = await nodeSamlSp(s, { entity: LONG_ENTITY });
  await addSp(t, s, sp.metadata, '--name', 'Wiki', '--allowed-group', 'staff');
  const browser = await launch(t);
  const signedIn = async (email: string): Promise<Page> => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${s.config.publicUrl}/signin`);
    await fillSignin(page, email);
    await page.waitForURL(/\/account/);
    return page;
  };
  return { s, sp, signedIn };
}

t.test('the account page: a nav of its sections, each link to a section with a heading; two columns at 1280 px, one at 390', async (t) => {
  const { signedIn } = await setUp(t);
  const page = await signedIn('ada@example.com');
  const nav = page.getByRole('navigation', { name: 'Sections of this page' });
  const links = await nav.getByRole('link').evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.textContent]));
  t.ok(links.length >= 8, `a link per section (${links.length})`);
  const sections = await page.locator('main section[id]').evaluateAll((ss) => ss.map((s) => [s.id, s.querySelector('h2')?.textContent]));
  t.same(
    links.map(([href]) => href),
    sections.map(([id]) => `#${id}`),
    'every section is linked, in the page order',
  );
  for (const [href, text] of links) {
    t.ok(await page.locator(`${href} > h2`).isVisible(), `${text} → ${href}: a section headed by an h2`);
  }
  // The link moves to its section (its heading comes into view).
  await page.setViewportSize({ width: 1280, height: 800 });
  await nav.getByRole('link', { name: 'Sessions' }).click();
  t.match(page.url(), /#sessions$/);
  t.ok(await page.getByRole('heading', { name: 'Sessions' }).isVisible(), 'the Sessions heading in view');

  const columnsAt = async (width: number) => {
    await page.setViewportSize({ width, height: 800 });
    const lefts = await page.locator('main section[id]').evaluateAll((ss) => ss.map((s) => Math.round(s.getBoundingClientRect().left)));
    return new Set(lefts).size;
  };
  t.equal(await columnsAt(1280), 2, 'two columns of sections at 1280 px');
  t.equal(await columnsAt(390), 1, 'one column at 390 px');
  t.equal(await page.evaluate('document.documentElement.scrollWidth'), 390, 'nothing wider than the phone');
});

t.test('the SAML refusal page: the header offers an administrator the console, a member not', async (t) => {
  const { sp, signedIn } = await setUp(t);
  for (const [email, console] of [
    ['admin@example.com', 1],
    ['ada@example.com', 0],
  ] as const) {
    const page = await signedIn(email);
    const res = await page.goto(await sp.saml.getAuthorizeUrlAsync('', undefined, {}));
    t.equal(res!.status(), 403, `${email}: refused (not in staff)`);
    t.ok(await page.getByRole('heading', { name: 'Not allowed' }).isVisible());
    t.equal(
      await page.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Console' }).count(),
      console,
      `${email}: Console link ${console ? 'shown' : 'not shown'}`,
    );
  }
});

t.test('the SAML console: URLs wrap after a slash, never mid-word; the Remove box above its button', async (t) => {
  const { s, signedIn } = await setUp(t);
  const page = await signedIn('admin@example.com');
  await page.goto(`${s.config.publicUrl}/admin/saml`);
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 });
    // Each line of a wrapped URL ends at a slash (or is the last): measured by the browser's own line boxes.
    const lines = await page.locator('main .url').evaluateAll((els) =>
      els
        .filter((el) => el.getClientRects().length > 0)
        .map((el) => {
          const text = el.textContent ?? '';
          const range = el.ownerDocument.createRange();
          const node = el.ownerDocument.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
          const out: string[] = [];
          let line = '';
          let top: number | undefined;
          for (let n = node.nextNode(); n; n = node.nextNode()) {
            for (let i = 0; i < (n.textContent ?? '').length; i++) {
              range.setStart(n, i);
              range.setEnd(n, i + 1);
              const y = Math.round(range.getBoundingClientRect().top);
              if (top !== undefined && y > top + 2) {
                out.push(line);
                line = '';
              }
              top = y;
              line += n.textContent![i];
            }
          }
          out.push(line);
          return { text, out };
        }),
    );
    t.ok(lines.length >= 1, `${width} px: URLs on the page`);
    t.ok(
      lines.some(({ out }) => out.length > 1),
      `${width} px: one wraps at least (the check below is not idle)`,
    );
    for (const { text, out } of lines) {
      t.equal(out.join(''), text);
      t.ok(
        out.slice(0, -1).every((l) => /[/?&#-]$/.test(l)),
        `${width} px: ${text} wraps only after / ? & # or a hyphen: ${JSON.stringify(out)}`,
      );
    }
    if (width === 1280)
      t.ok(
        lines.some(({ text }) => text === LONG_ENTITY),
        'the entity id is shown on a wide screen',
      );
    const box = await page.getByLabel('Remove Wiki').boundingBox();
    const button = await page.getByRole('button', { name: 'Remove', exact: true }).boundingBox();
    t.ok(box!.y + box!.height <= button!.y, `${width} px: the Remove box above the Remove button`);
    t.ok(Math.abs(box!.x - button!.x) < 16, `${width} px: and in line with it, not floating beside another button`);
  }
});
