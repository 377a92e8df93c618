// Builds the one native addon that is compiled here, sqlite3, from its source in node_modules.
// npm runs no package's install script (.npmrc: ignore-scripts), so `npm ci` executes no code
// from the registry; `npm run build` (and so `npm test`) calls this first. node-gyp is pointed at
// the Node headers installed beside this node (Debian and Ubuntu: /usr/include/node), so nothing
// is downloaded; where there are none, node-gyp fetches the headers for this Node version.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The folder whose include/node holds this Node's own headers, or null. */
function headersDir() {
  const candidates = [process.env.GATEHOUSE_NODE_HEADERS, path.resolve(path.dirname(process.execPath), '..'), '/usr', '/usr/local'];
  for (const dir of candidates) {
    if (!dir) continue;
    try {
      const h = fs.readFileSync(path.join(dir, 'include', 'node', 'node_version.h'), 'utf8');
      const v = ['MAJOR', 'MINOR', 'PATCH'].map((p) => new RegExp(`#define NODE_${p}_VERSION (\\d+)`).exec(h)?.[1]).join('.');
      if (`v${v}` === process.version) return dir;
    } catch {
      // not there: the next candidate
    }
  }
  return null;
}

export function ensureSqlite3(root) {
  const dir = path.join(root, 'node_modules', 'sqlite3');
  if (fs.existsSync(path.join(dir, 'build', 'Release', 'node_sqlite3.node'))) return;
  if (!fs.existsSync(dir)) throw new Error('node_modules/sqlite3 is missing: run npm ci first');
  const nodedir = headersDir();
  console.log(
    `building sqlite3 from source against ${nodedir ? `${nodedir}/include/node` : `Node ${process.version}'s downloaded headers`} (once; about 90 s on 2 cores)`,
  );
  const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  const args = [gyp, 'rebuild', '--release', '--jobs', 'max', ...(nodedir ? [`--nodedir=${nodedir}`] : [])];
  // Quiet unless it fails (the compiler's warnings about SQLite's own C are not ours to act on).
  const r = spawnSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    process.stderr.write(`${r.stdout}${r.stderr}`.split('\n').slice(-40).join('\n'));
    throw new Error(`building sqlite3 failed (node-gyp exit ${r.status}): it needs python3, make and g++`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) ensureSqlite3(path.resolve(path.dirname(new URL(import.meta.url).pathname), '..'));
