// The store stores; each rule lives in its domain (issue 73). The refusals of what a configuration
// file or a directory source manages are one guard in src/managed, with both managers' exemptions
// inside it; the back-channel logouts a session's end causes are queued by the accounts' domain,
// through which alone the store's writes that end sessions are reached.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const SRC = path.join(__dirname, '..', '..', 'src');
const files = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
const rel = (file: string) => path.relative(SRC, file).split(path.sep).join('/');
/** The code without comments (a comment may name what the code may not do). */
const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

t.test('the store refuses nothing on a domain’s behalf', async (t) => {
  // Copying into a store that already holds accounts is the copy's own precondition, not a domain's rule.
  const refusing = files(path.join(SRC, 'store'))
    .filter((f) => rel(f) !== 'store/copy.ts')
    .filter((f) => /AppError\(\s*'forbidden'/.test(code(f)))
    .map(rel);
  t.same(refusing, [], 'no forbidden refusal under src/store');
});

t.test('the store queues no message of its own accord', async (t) => {
  const queueing = files(path.join(SRC, 'store'))
    .filter((f) => rel(f) !== 'store/deliveries.ts')
    .filter((f) => /\benqueue\(/.test(code(f)) && !/const enqueue =/.test(code(f)))
    .map(rel);
  t.same(queueing, [], 'only store/deliveries.ts writes the delivery queue, when a domain asks it');
});

t.test('every write that ends sessions goes through accounts/session-ends.ts, which tells their clients', async (t) => {
  const ENDING: Record<string, readonly string[]> = {
    'store/accounts': ['bumpAuthVersion', 'deleteAccount'],
    'store/sessions': ['endSession'],
    'store/totp': ['enableTotp', 'disableTotp'],
  };
  const found: string[] = [];
  for (const file of files(SRC)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
    for (const node of source.statements) {
      if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier) || !node.moduleSpecifier.text.startsWith('.')) continue;
      const target = path
        .relative(SRC, path.resolve(path.dirname(file), node.moduleSpecifier.text))
        .split(path.sep)
        .join('/');
      const names = ENDING[target];
      const bindings = node.importClause?.namedBindings;
      if (!names || !bindings || !ts.isNamedImports(bindings)) continue;
      for (const b of bindings.elements) {
        const name = (b.propertyName ?? b.name).text;
        if (names.includes(name)) found.push(`${rel(file)}: ${name} from ${target}`);
      }
    }
  }
  t.same(
    found.filter((f) => !f.startsWith('accounts/session-ends.ts:')),
    [],
    'no other file ends sessions with the store directly',
  );
  t.equal(found.filter((f) => f.startsWith('accounts/session-ends.ts:')).length, 5, 'session-ends.ts wraps all five');
});

t.test('the managers’ own writers pass in one place: the guard of src/managed', async (t) => {
  const exempting = files(SRC)
    .filter((f) => !rel(f).startsWith('managed/'))
    .filter((f) => /via\s*[!=]==?\s*'(config|source)'|'(config|source)'\s*[!=]==?\s*via/.test(code(f)))
    .map(rel);
  t.same(exempting, [], 'no call site exempts an apply or a sync itself');
});
