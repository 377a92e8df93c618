// Loose ends a newcomer found: `npm start` ran the executable through node (a SyntaxError), the
// package's `bin` named a file that does not exist, and there was no LICENSE though it says MIT.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

t.test('bin and start name the executable the build writes', async (t) => {
  for (const file of Object.values(pkg.bin) as string[]) {
    t.ok(fs.existsSync(path.join(root, file)), `${file} exists (npm run build made it)`);
    t.equal(fs.readFileSync(path.join(root, file)).subarray(0, 4).toString('latin1'), '\x7fELF', `${file} is the executable`);
  }
  t.match(pkg.scripts.start, /^\.\/dist\/gatehouse serve/, 'npm start runs it directly, not through node');
});

t.test('the license the package names is there', async (t) => {
  t.equal(pkg.license, 'MIT');
  t.match(fs.readFileSync(path.join(root, 'LICENSE'), 'utf8'), /^MIT License/);
});

t.test('comments cite nothing the repository does not have', async (t) => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else if (e.name.endsWith('.ts')) files.push(path.join(dir, e.name));
    }
  };
  walk(path.join(root, 'src'));
  const cites = files.filter((f) => /CONTRACT §|\bissue \d+\b/.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(root, f));
  t.same(cites, [], 'no "CONTRACT §n" or "issue n" in src/');
});
