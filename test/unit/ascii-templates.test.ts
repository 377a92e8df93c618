// The executable's bundle must be ASCII (scripts/build.mjs refuses it otherwise: V8 would hold the
// whole script as a two-byte string). The bundler escapes every string it may, but a tagged
// template's raw text must stay as written: a page template (html`…`) writes other characters
// as HTML entities (&hellip;, &mdash;) or takes them from the catalogues. Read with TypeScript's
// own parser, so comments and strings are what they are.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const root = path.join(__dirname, '..', '..', 'src');
const files = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));

t.test('no character beyond ASCII in the raw text of a tagged template', async (t) => {
  const found: string[] = [];
  for (const file of files(root)) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isTaggedTemplateExpression(node)) {
        const tpl = node.template;
        const parts = ts.isNoSubstitutionTemplateLiteral(tpl) ? [tpl] : [tpl.head, ...tpl.templateSpans.map((span) => span.literal)];
        for (const part of parts) {
          const raw = part.rawText ?? '';
          const at = [...raw].findIndex((c) => c.charCodeAt(0) > 0x7f);
          if (at >= 0) {
            const line = source.getLineAndCharacterOfPosition(part.getStart(source)).line + 1;
            found.push(`${path.relative(root, file)}:${line}: ${JSON.stringify([...raw].slice(Math.max(0, at - 20), at + 3).join(''))}`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  t.same(found, [], 'page templates write such characters as entities');
});
