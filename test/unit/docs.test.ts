// The README is a guide and the reference lives in docs/: every relative link between them (and
// every #anchor) leads somewhere, the README's first screen keeps its two set-up commands, and
// docs/cli.md's synopsis names every command there is.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main';

const root = path.join(__dirname, '..', '..');
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => path.join('docs', f))].filter((f) => f.endsWith('.md'));

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

t.test('every relative link and anchor in the README and docs/ resolves', async (t) => {
  for (const page of pages) {
    const text = fs.readFileSync(path.join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      const [file, anchor] = target.split('#');
      const resolved = file === '' ? path.join(root, page) : path.join(root, path.dirname(page), file);
      t.ok(fs.existsSync(resolved), `${page}: ${target} exists`);
      if (anchor && fs.existsSync(resolved) && resolved.endsWith('.md')) {
        t.ok(anchors(fs.readFileSync(resolved, 'utf8')).has(anchor), `${page}: ${target} names a heading`);
      }
    }
  }
});

t.test('each docs page says what it is for, under its title', async (t) => {
  for (const page of pages.filter((p) => p.startsWith('docs'))) {
    const [title, blank, purpose] = fs.readFileSync(path.join(root, page), 'utf8').split('\n');
    t.match(title, /^# /, `${page}: a title`);
    t.equal(blank, '', page);
    t.ok(purpose.length > 20, `${page}: what it is for`);
  }
});

t.test('the README is a guide: short, with the two set-up commands on its first screen', async (t) => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  t.ok(readme.split('\n').length <= 250, 'at most 250 lines');
  const first = readme.split('\n').slice(0, 30).join('\n');
  // Two blocks of one command each, so that neither is pasted with the other: one builds and
  // starts the server, the other runs the tests.
  const blocks = [...first.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1].trim().split('\n'));
  t.equal(blocks.length, 2, 'two blocks');
  t.same(
    blocks.map((b) => b.length),
    [1, 1],
    'one command each',
  );
  t.match(blocks[0][0], /^npm ci && npm run build && \.\/dist\/gatehouse serve$/, 'the first builds and starts');
  t.match(blocks[1][0], /&& npm test$/, 'the second runs the tests');
  t.notMatch(blocks[1][0], /gatehouse serve/, 'and starts no server');
  t.match(first, /--host .*--public-url/s, 'a machine reached over the network: --host and --public-url, where it says to open the address');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  t.match(pkg.scripts.test, /tap/, 'npm test runs the suite');
});

t.test("docs/cli.md's synopsis names every command and subcommand gatehouse --help lists", async (t) => {
  const cliDoc = fs.readFileSync(path.join(root, 'docs', 'cli.md'), 'utf8');
  const synopsis = /^```\n(gatehouse [\s\S]*?)```/m.exec(cliDoc)![1];
  // Each top-level command's entry: its line and the continuation lines under it.
  const entries = new Map<string, string>();
  let current = '';
  for (const line of synopsis.split('\n')) {
    const m = /^gatehouse ([a-z-]+)/.exec(line);
    if (m) current = m[1];
    if (current) entries.set(current, `${entries.get(current) ?? ''}\n${line}`);
  }
  const program = buildProgram({ out: () => {}, err: () => {}, env: {}, readStdin: async () => '' }, { serve: async () => {} });
  const leaves = (cmd: Command, path: string[]): string[][] =>
    cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => (c.commands.length > 0 ? leaves(c, [...path, c.name()]) : [[...path, c.name()]]));
  const all = leaves(program, []);
  t.ok(all.length > 60, `${all.length} commands`);
  for (const [top, ...rest] of all) {
    const entry = entries.get(top);
    // restore is written beside backup, on its line.
    const where = entry ?? (top === 'restore' ? entries.get('backup') : undefined);
    if (!where) {
      t.fail(`gatehouse ${top} is missing from the synopsis`);
      continue;
    }
    const words = [...(entry ? [] : [top]), ...rest].join(' ');
    if (words === '') continue;
    t.match(where, new RegExp(`(^|[\\s|(])${words.replace(/-/g, '\\-')}(?=[\\s)]|$)`, 'm'), `gatehouse ${[top, ...rest].join(' ')}`);
  }
});
