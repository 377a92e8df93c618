/** Where the code calls a function: read with the TypeScript compiler, for tests that hold a rule to one place. */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SRC = path.join(__dirname, '..', '..', 'src');

/** Every call of a function named `name` under src/, as `file:enclosing function`. */
export function callsOf(name: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) {
        const file = ts.createSourceFile(full, fs.readFileSync(full, 'utf8'), ts.ScriptTarget.ES2022, true);
        const visit = (node: ts.Node, within: string) => {
          let here = within;
          if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) here = node.name.getText(file);
          if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer)))
            here = node.name.getText(file);
          if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === name)
            found.push(`${path.relative(SRC, full).split(path.sep).join('/')}:${here}`);
          ts.forEachChild(node, (child) => visit(child, here));
        };
        visit(file, '(top)');
      }
    }
  };
  walk(SRC);
  return found.sort();
}
