// The layers stay as docs/architecture.md draws them: only src/store knows knex; the front ends (http,
// cli) reach the domain through the core; koa lives in http, commander in cli; errors.ts knows
// no HTTP status. (ESLint checks the same while editing; this keeps it true in every test run.)
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const SRC = path.join(__dirname, '..', '..', 'src');

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
const imports = (file: string) => [...code(file).matchAll(/(?:from|import)\s+'([^']+)'/g)].map((m) => m[1]);
const rel = (file: string) => path.relative(SRC, file).split(path.sep).join('/');

t.test('no knex outside src/store', async (t) => {
  const offenders = files(SRC).filter((f) => !rel(f).startsWith('store/') && /\bknex\b/i.test(code(f)));
  t.same(offenders.map(rel), []);
});

t.test('http and cli import only the core, errors, config, log and their own folder', async (t) => {
  const allowed = new Set(['core', 'errors', 'config', 'log']);
  for (const front of ['http', 'cli']) {
    for (const file of files(path.join(SRC, front))) {
      // Resolved against the file: its own front end's folder, or one of the allowed modules of src.
      const bad = imports(file).filter((i) => {
        if (!i.startsWith('.')) return false;
        const target = rel(path.resolve(path.dirname(file), i));
        return !target.startsWith(`${front}/`) && !allowed.has(target);
      });
      t.same(bad, [], `${rel(file)}`);
    }
  }
});

t.test('koa only in src/http, commander only in src/cli', async (t) => {
  for (const file of files(SRC)) {
    const r = rel(file);
    const pkgs = imports(file).filter((i) => !i.startsWith('.'));
    if (!r.startsWith('http/'))
      t.notOk(
        pkgs.some((p) => p === 'koa' || p.startsWith('@koa/') || p.startsWith('koa-')),
        `${r}: no koa`,
      );
    if (!r.startsWith('cli/')) t.notOk(pkgs.includes('commander'), `${r}: no commander`);
  }
});

t.test('errors.ts holds no HTTP status', async (t) => {
  t.notMatch(code(path.join(SRC, 'errors.ts')), /\b[1-5]\d\d\b/);
});
