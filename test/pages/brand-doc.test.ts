// docs/branding-and-languages.md's worked example as written: its files written out, its
// `gatehouse serve` line's flags given to a server, and a German browser's sign-in page showing
// what the page says it shows.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir, withAdmin } from '../helpers/server';

const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'branding-and-languages.md'), 'utf8');
const block = (name: string) => new RegExp(`<!-- brand-recipe: ${name.replace('.', '\\.')} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(doc)![1];

/** The serve line's flags, split as a shell splits them (quotes taken off), files beside it. */
function flagsOf(line: string, dir: string): Record<string, string> {
  const words = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  t.same(words.slice(0, 2), ['gatehouse', 'serve']);
  const flags: Record<string, string> = {};
  for (let i = 2; i < words.length; i += 2) {
    const key = words[i].replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    const value = words[i + 1];
    flags[key] = fs.existsSync(path.join(dir, value)) ? path.join(dir, value) : value;
  }
  return flags;
}

t.test('the worked example works as written', async (t) => {
  const dir = tempDir(t);
  for (const file of ['logo.svg', 'brand.css', 'messages.yaml']) fs.writeFileSync(path.join(dir, file), block(file) + '\n');
  const s = await startTestServer(t, flagsOf(block('serve'), dir));
  const page = await (await fetch(`${s.url}/signin`, { headers: { 'accept-language': 'de' } })).text();
  t.match(page, '<html lang="de" dir="ltr">');
  t.match(page, '<span class="brand-name">Example Cloud</span>');
  t.match(page, '<img class="brand-logo" src="/assets/brand-logo?v=');
  t.match(page, 'Passwort verloren? Hier zurücksetzen');
  t.match(page, '/assets/brand.css');
  t.match(await (await fetch(`${s.url}/assets/brand-color.css`)).text(), '--accent: #00695c');
  const logo = await fetch(`${s.url}/assets/brand-logo`);
  t.equal(logo.headers.get('content-type'), 'image/svg+xml');
});

t.test('the configuration file example works as written', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  for (const file of ['logo.svg', 'brand.css', 'look.yaml']) fs.writeFileSync(path.join(dir, file), block(file) + '\n');
  const words = block('apply').split(' ');
  t.same(words.slice(0, 3), ['gatehouse', 'config', 'apply']);
  const r = await cli(s.dataDir, ['config', 'apply', path.join(dir, words[3])]);
  t.equal(r.code, 0, r.err);
  const server = await startTestServer(t, {}, s.dataDir);
  const page = await (await fetch(`${server.url}/signin`)).text();
  t.match(page, '<html lang="de" dir="ltr">');
  t.match(page, '<span class="brand-name">Example Cloud</span>');
  t.match(page, '<img class="brand-logo" src="/assets/brand-logo?v=');
  t.match(await (await fetch(`${server.url}/assets/brand-color.css`)).text(), '--accent: #00695c');
  t.match(await (await fetch(`${server.url}/assets/brand.css`)).text(), 'letter-spacing');
});
