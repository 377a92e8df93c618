// A configuration file's `look:` (docs/configuration.md): applied, planned again as nothing to
// change, exported and planned from the export as nothing to change; bad values refused at their
// line with the flag's own words, and nothing of the file kept; a setting the file stops naming
// removed again. The pages show what the file set; a flag given to the server wins over it.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir, withAdmin } from '../helpers/server';

const LOGO = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="#00695c"/></svg>';
const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const changes = (out: string) => out.split('\n').filter((l) => /^[+~-] /.test(l));

t.test('apply, plan, export, plan of the export: the look round trips', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const run = (args: string[]) => cli(s.dataDir, args);
  write(dir, 'logo.svg', LOGO);
  write(dir, 'brand.css', 'header { border-bottom: 3px solid var(--accent); }\n');
  const file = write(
    dir,
    'look.yaml',
    "version: 1\nlook:\n  brand_name: Example Cloud\n  brand_color: '#00695C'\n  default_language: de\n  brand_logo: logo.svg\n  brand_css: brand.css\n",
  );
  const plan = await run(['config', 'plan', file]);
  t.equal(plan.code, 2, plan.err);
  t.same(changes(plan.out), [
    '+ look brand_name: "Example Cloud"',
    '+ look brand_color: "#00695c"',
    '+ look default_language: "de"',
    `+ look brand_logo: image/svg+xml, ${LOGO.length} bytes from logo.svg`,
    '+ look brand_css: 51 bytes from brand.css',
  ]);
  t.equal((await run(['config', 'apply', file])).code, 0);
  t.equal((await run(['config', 'plan', file])).code, 0, 'applied twice: nothing to change');

  const exported = await run(['config', 'export']);
  t.match(
    exported.out,
    'look:\n  brand_name: Example Cloud\n  brand_color: "#00695c"\n  default_language: de\n  brand_logo: logo.svg\n  brand_css: brand.css\n',
  );
  const again = write(dir, 'exported.yaml', exported.out);
  const replan = await run(['config', 'plan', again]);
  t.equal(replan.code, 0, `the export plans as nothing to change: ${replan.out}`);

  // The pages show it: German by default, the name, the logo and the colour.
  const server = await startTestServer(t, {}, s.dataDir);
  const page = await (await fetch(`${server.url}/signin`)).text();
  t.match(page, '<html lang="de" dir="ltr">');
  t.match(page, '<span class="brand-name">Example Cloud</span>');
  t.equal((await fetch(`${server.url}/assets/brand-logo`)).headers.get('content-type'), 'image/svg+xml');
  t.match(await (await fetch(`${server.url}/assets/brand-color.css`)).text(), '--accent: #00695c');
  t.match(await (await fetch(`${server.url}/assets/brand.css`)).text(), 'border-bottom');

  // The file no longer names them: what it set is removed, the pages are Gatehouse's again.
  const empty = write(dir, 'look.yaml', 'version: 1\n');
  const gone = await run(['config', 'apply', empty]);
  t.equal(gone.code, 0, gone.err);
  t.same(changes(gone.out).sort(), ['- look brand_color', '- look brand_css', '- look brand_logo', '- look brand_name', '- look default_language']);
  t.equal((await fetch(`${server.url}/assets/brand-logo`)).status, 404);
  t.notMatch((await run(['config', 'export'])).out, 'look:');
});

t.test('bad values are refused at their line, in the flag’s words, and nothing is kept', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const run = (args: string[]) => cli(s.dataDir, args);
  write(dir, 'logo.svg', LOGO);
  write(dir, 'page.svg', '<html><script>alert(1)</script></html>');
  write(dir, 'evil.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  write(dir, 'big.css', 'a{}'.repeat(30000));
  const outside = path.join(tempDir(t), 'outside.css');
  fs.writeFileSync(outside, 'a {}');
  const cases: Array<[string, RegExp]> = [
    ['brand_color: teal', /look\.yaml:3:\d+: look\.brand_color must be a colour as #RRGGBB \(like #0b57d0\), got "teal"/],
    ["brand_name: ''", /look\.yaml:3:\d+: look\.brand_name must be 1 to 60 characters on one line/],
    [`brand_name: ${'x'.repeat(61)}`, /look\.brand_name must be 1 to 60 characters/],
    ['default_language: es', /look\.yaml:3:\d+: look\.default_language must be equal to one of the allowed values/],
    ['brand_logo: page.svg', /look\.yaml:3:\d+: look\.brand_logo: page\.svg is not a logo Gatehouse serves/],
    ['brand_logo: evil.svg', /look\.brand_logo: evil\.svg is not a logo Gatehouse serves: it holds a <script> element/],
    ['brand_logo: missing.svg', /look\.yaml:3:\d+: cannot read the logo missing\.svg/],
    ['brand_css: big.css', /look\.brand_css: big\.css is 90000 bytes; a stylesheet may be at most 65536/],
    [`brand_css: ${outside}`, /is outside the configuration file's folder/],
    ['brand_colour: "#000000"', /look\.yaml:3:\d+: look must NOT have additional properties \(brand_colour\)/],
  ];
  for (const [line, want] of cases) {
    // A good name first: refused with the bad value, it is not kept either.
    const file = write(
      dir,
      'look.yaml',
      `version: 1\nlook:\n  ${line}\n  brand_logo: logo.svg\n`.replace(
        /\n {2}brand_logo: logo\.svg\n$/,
        line.startsWith('brand_logo') ? '\n' : '\n  brand_logo: logo.svg\n',
      ),
    );
    const r = await run(['config', 'apply', file]);
    t.equal(r.code, 2, line);
    t.match(r.err, want, line);
    t.notMatch(r.err, /look\.yaml:\d+:\d+: \S*look\.yaml:\d+:\d+/, `${line}: where, said once`);
  }
  t.notMatch((await run(['config', 'export'])).out, 'look:', 'nothing of the refused files was kept');
});

t.test('a flag given to the server wins over the file', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const file = write(dir, 'look.yaml', "version: 1\nlook:\n  brand_name: From The File\n  brand_color: '#123456'\n");
  t.equal((await cli(s.dataDir, ['config', 'apply', file])).code, 0);
  const server = await startTestServer(t, { brandName: 'From The Flag' }, s.dataDir);
  const page = await (await fetch(`${server.url}/signin`)).text();
  t.match(page, '<span class="brand-name">From The Flag</span>');
  t.match(await (await fetch(`${server.url}/assets/brand-color.css`)).text(), '--accent: #123456', 'the file’s colour: no flag for it');
});
