// Makes the executable's code cache (dist/gatehouse.cache, loaded by scripts/sea-main.cjs): the
// bundle runs on the executable's own Node as the executable starts it, `serve` on a fresh store
// to its first /ping (then SIGTERM) and `stats`, each run adding the functions it compiled.
// --random-seed=1 and --predictable make the cache the same bytes on every build (without
// --predictable, a few flag bytes differed from build to build); V8 leaves both out of the flag
// hash a cache is checked against, so the executable, started without them, accepts it.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const runner = path.join(path.dirname(fileURLToPath(import.meta.url)), 'code-cache-run.cjs');

export async function makeCodeCache(nodeBin, bundle, cacheFile) {
  fs.rmSync(cacheFile, { force: true });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cache-home-'));
  const env = { HOME: home, PATH: process.env.PATH };
  const data = path.join(home, 'data');
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
  try {
    // The store made first (the migrations are no start's work), then a usual start.
    const migrate = spawnSync(nodeBin, [bundle, '--data-dir', data, 'migrate'], { env, stdio: 'ignore' });
    if (migrate.status !== 0) throw new Error('code cache: migrate failed');
    const child = spawn(nodeBin, ['--random-seed=1', '--predictable', runner, bundle, cacheFile, 'serve', '--port', String(port), '--data-dir', data], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const until = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null || Date.now() > until) throw new Error('code cache: serve did not answer /ping');
      try {
        if ((await fetch(`http://127.0.0.1:${port}/ping`)).status === 200) break;
      } catch {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // A moment for serve to install its signal handlers (they follow the listening socket).
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    // A stop that never ends fails the build rather than hanging it.
    const late = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(late);
    if (code !== 0) throw new Error(`code cache: serve did not stop cleanly (${code === null ? 'killed after 30 s' : `exit ${code}`})`);
    const stats = spawnSync(nodeBin, ['--random-seed=1', '--predictable', runner, bundle, cacheFile, '--data-dir', data, 'stats'], { env, stdio: 'ignore' });
    if (stats.status !== 0) throw new Error('code cache: stats failed');
    // The runs above used flags V8 leaves out of a cache's check; one without them must accept it too
    // (the runner fails on a rejected cache), as the executable, started without flags, will.
    const copy = path.join(home, 'check.cache');
    fs.copyFileSync(cacheFile, copy);
    if (spawnSync(nodeBin, [runner, bundle, copy, 'version'], { env, stdio: 'ignore' }).status !== 0)
      throw new Error('code cache: rejected without the training flags');
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
