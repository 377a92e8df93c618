// Issue 35: domain code never names a CLI flag to a person in a browser. A setting or argument in a
// message is written {--name}: the shell shows "--name", HTTP and the pages "name". Only src/cli/,
// the settings (src/config.ts: they are the flags) and serve's own start-up lines for a terminal
// (src/serve.ts) spell flags out. And no error is dropped without a word on why.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { AppError, messageFor } from '../../src/errors';

const SRC = path.join(__dirname, '..', '..', 'src');
const ALLOWED = new Set(['cli', 'config.ts', 'config', 'serve.ts']);

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    const rel = path.relative(SRC, full).split(path.sep).join('/');
    if (ALLOWED.has(rel)) return [];
    return e.isDirectory() ? files(full) : e.name.endsWith('.ts') ? [full] : [];
  });
}

t.test('no --flag in a string outside src/cli/ (but as a {--field} mark)', async (t) => {
  const found: string[] = [];
  for (const file of files(SRC)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      if (
        ts.isStringLiteral(node) ||
        ts.isNoSubstitutionTemplateLiteral(node) ||
        ts.isTemplateHead(node) ||
        ts.isTemplateMiddle(node) ||
        ts.isTemplateTail(node)
      ) {
        // CSS custom properties (var(--fg)) are not flags; a whole command line shown as one
        // (`gatehouse action set-permission signup --guest on`) is the shell's own words.
        const text = node.text.replace(/var\(--[a-z-]+\)|--[a-z-]+:/g, '').replace(/gatehouse [a-z][^<`]*/g, '');
        // A server setting named with its environment variable beside it (`--webhook-allow-private
        // loopback, or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=loopback`) is the operator's words in every
        // front end: it is no field of the form or file at hand.
        let whole: ts.Node = node;
        while (whole.parent && !ts.isTemplateExpression(whole) && (ts.isTemplateSpan(whole.parent) || ts.isTemplateExpression(whole.parent)))
          whole = whole.parent;
        const setting = (flag: string) => whole.getText().includes(`GATEHOUSE_${flag.slice(2).toUpperCase().replace(/-/g, '_')}`);
        for (const m of text.matchAll(/(?<![{\w-])--[a-z][a-z-]+/g))
          if (!setting(m[0])) found.push(`${path.relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${m[0]}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  t.same(found, []);
});

t.test('each front end words a field its own way', async (t) => {
  const err = new AppError('invalid_input', '{--bypass-path} takes a path prefix like /admin');
  t.equal(err.message, 'bypass path takes a path prefix like /admin', 'HTTP, the pages, the logs');
  t.equal(messageFor(err, 'cli'), '--bypass-path takes a path prefix like /admin', 'the shell');
  t.equal(new AppError('invalid_input', 'a {token} template stays').message, 'a {token} template stays', 'other braces are left alone');
});

t.test('an error dropped without its code (.catch(() => …)) says why, on its line or the one above', async (t) => {
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  const silent: string[] = [];
  for (const file of walk(SRC)) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (/\.catch\(\(\) =>/.test(line) && !/\/\/ ./.test(line) && !/^\s*\/\/ ./.test(lines[i - 1] ?? '')) silent.push(`${path.relative(SRC, file)}:${i + 1}`);
    });
  }
  t.same(silent, []);
});
