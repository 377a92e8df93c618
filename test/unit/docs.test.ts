// The README is a guide and the reference lives in docs/: every relative link between them (and
// every #anchor) leads somewhere, and the README's first screen keeps its two set-up commands.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

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
  const first = readme.split('\n').slice(0, 25).join('\n');
  const block = /```sh\n([\s\S]*?)```/.exec(first)?.[1].trim().split('\n') ?? [];
  t.equal(block.length, 2, 'two commands');
  t.match(block[0], /npm ci && npm run build && \.\/dist\/gatehouse serve/);
  t.match(block[1], /npm test/);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  t.match(pkg.scripts.test, /tap/, 'npm test runs the suite');
});
