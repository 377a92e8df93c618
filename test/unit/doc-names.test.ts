// The docs send readers to files and functions by name; a rename must not leave them pointing at
// nothing (issue 58, item 6: docs/architecture.md named refuseIfDisabled and completeSignin long
// after both were gone). Three patterns, chosen to give no false positives:
//   - a backticked path under src/, test/, scripts/, bin/ or migrations/ that names a file (with
//     an extension) or a folder (ending in /) exists; a `*` in it is a glob over one folder, and
//     at least one file matches (a path without either, like a Node release's `bin/node`, is not
//     ours);
//   - in docs/architecture.md, every `something.ts` word (inside the drawing too) is the end of
//     the path of a file in src/, bin/, scripts/ or test/;
//   - a backticked function call, `name()` or `name(args)`, and a backticked camelCase name in
//     docs/architecture.md, appear as a word somewhere in src/ or bin/.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const root = path.join(__dirname, '..', '..');
const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => path.join('docs', f))].filter((f) => f.endsWith('.md'));

function walk(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'node_modules' || e.name.startsWith('.')) return [];
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? walk(rel) : [rel];
  });
}

const files = ['src', 'bin', 'scripts', 'test'].flatMap(walk);
const code = ['src', 'bin']
  .flatMap(walk)
  .map((f) => fs.readFileSync(path.join(root, f), 'utf8'))
  .join('\n');
const backticked = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);

function pathExists(p: string): boolean {
  const clean = p.replace(/[),.:;]+$/, '');
  if (!clean.includes('*')) return fs.existsSync(path.join(root, clean));
  const dir = path.dirname(clean);
  const re = new RegExp(
    `^${path
      .basename(clean)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  return fs.existsSync(path.join(root, dir)) && fs.readdirSync(path.join(root, dir)).some((f) => re.test(f));
}

t.test('every backticked path in the README and docs/ exists', async (t) => {
  for (const page of pages) {
    const text = fs.readFileSync(path.join(root, page), 'utf8');
    for (const token of backticked(text)) {
      for (const word of token.split(/\s+/)) {
        if (/^(src|test|scripts|bin|migrations)\/[\w./*-]*(\.[a-z]+|\/)$/.test(word.replace(/[),.:;]+$/, '')))
          t.ok(pathExists(word), `${page}: ${word} exists`);
      }
    }
  }
});

t.test('every file docs/architecture.md names is a file of ours', async (t) => {
  const text = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
  const names = new Set([...text.matchAll(/(?<![\w/.-])((?:[\w-]+\/)*[\w-]+\.ts)\b/g)].map((m) => m[1]!));
  t.ok(names.size > 20, 'the page names files');
  for (const name of names) {
    t.ok(
      files.some((f) => f === name || f.endsWith(`/${name}`)),
      `docs/architecture.md: ${name} is a file in src/, bin/, scripts/ or test/`,
    );
  }
});

t.test('every function the docs name exists in src/ or bin/', async (t) => {
  const defined = (name: string) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(code);
  for (const page of pages) {
    const text = fs.readFileSync(path.join(root, page), 'utf8');
    for (const token of backticked(text)) {
      const call = /^([a-z_$][\w$]*)\([^()]*\)$/.exec(token);
      if (call) t.ok(defined(call[1]!), `${page}: ${call[1]}() is in src/`);
    }
  }
  const arch = fs.readFileSync(path.join(root, 'docs', 'architecture.md'), 'utf8');
  for (const token of backticked(arch)) {
    if (/^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/.test(token)) t.ok(defined(token), `docs/architecture.md: ${token} is in src/`);
  }
});
