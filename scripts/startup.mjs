// Prints the executable's size and its start time to the first /ping answer (cold: empty native
// cache; warm: cache filled), from an empty folder, beside a bare Node http server's (the floor).
// Usage: node scripts/startup.mjs [runs]; npm run bench uses startupFigures().
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { rssPartsOf } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exe = path.join(root, 'dist', 'gatehouse');
const runs = Number(process.argv[2] ?? 5);

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** One start; `data` is an existing data folder to reuse, else a fresh store is made (and removed). */
async function once(home, data = null) {
  const dir = data ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  const port = await freePort();
  const started = process.hrtime.bigint();
  const child = spawn(exe, ['serve', '--port', String(port), '--data-dir', path.join(dir, 'data')], { env: { HOME: home }, stdio: 'ignore' });
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/ping`);
      if (res.status === 200) break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  if (data === null) fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** The same measurement for a bare Node http server answering /ping: the floor no server can beat here. */
async function floorOnce(rss = false) {
  const port = await freePort();
  const started = process.hrtime.bigint();
  const code = `require('http').createServer((q, s) => s.end('{}')).listen(${port}, '127.0.0.1')`;
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ping`)).status === 200) break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  // Its idle RSS, read as the bench reads Gatehouse's: 300 ms after the first answer.
  let idle = 0;
  if (rss) {
    await new Promise((r) => setTimeout(r, 300));
    idle = rssPartsOf(child.pid).rss;
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return rss ? idle : ms;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Start to first /ping: cold (a fresh store: migrations and a new signing key, and an empty
 * native cache), fresh (a fresh store, cache filled) and restart (the store exists: the usual
 * start), medians of `runs`, beside the bare-Node floor.
 */
export async function startupFigures(runs = 5) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-home-'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  try {
    const cold = await once(home);
    const fresh = [];
    const restart = [];
    const floor = [];
    await once(home, data);
    for (let i = 0; i < runs; i++) {
      fresh.push(await once(home));
      restart.push(await once(home, data));
      floor.push(await floorOnce());
    }
    return { cold, fresh: median(fresh), restart: median(restart), floor: median(floor), floorRss: await floorOnce(true) };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(data, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`dist/gatehouse: ${(fs.statSync(exe).size / 1048576).toFixed(1)} MiB`);
  const f = await startupFigures(runs);
  console.log(`start to first /ping, cold (fresh store, empty native cache): ${f.cold.toFixed(0)} ms`);
  console.log(`start to first /ping, fresh store, median of ${runs}: ${f.fresh.toFixed(0)} ms`);
  console.log(`start to first /ping, existing store (a restart), median of ${runs}: ${f.restart.toFixed(0)} ms`);
  console.log(`the same for a bare Node http server (the floor): ${f.floor.toFixed(0)} ms`);
}
