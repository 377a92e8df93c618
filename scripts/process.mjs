// Child processes for the benchmark scripts: start one, wait for the line that says it is ready,
// stop it, read its RSS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The URL in Gatehouse's "listening" log line. */
/**
 * `gatehouse serve` as the benchmarks start it: a free port, `dataDir`, bcrypt at `cost`, no
 * rate limits (the load comes from one address), then `more`.
 */
export const benchServeArgs = (dataDir, cost, ...more) => [
  'serve',
  '--port',
  '0',
  '--data-dir',
  dataDir,
  '--bcrypt-cost',
  String(cost),
  '--no-rate-limits',
  ...more,
];

export const LISTENING = /"event":"listening","url":"([^"]+)"/;

/** Spawns `cmd`; `ready` resolves with the first match of `pattern` in its stdout (then drained). */
export function spawnJsonLine(cmd, args, pattern = LISTENING) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise((resolve, reject) => {
    let buf = '';
    const onData = (chunk) => {
      buf += chunk;
      const m = pattern.exec(buf);
      if (m) {
        child.stdout.off('data', onData);
        child.stdout.resume(); // keep draining the request log
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${path.basename(cmd)} exited with ${code}`)));
  });
  return { child, ready };
}

export async function stop(child) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

const statusField = (status, name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
export const rssOf = (pid) => statusField(fs.readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');

/**
 * RSS and its two parts: anonymous memory (the heap, stacks: what the process allocated) and
 * file-backed pages (the executable's code it has touched, shared with the page cache; how many
 * are mapped depends on the kernel's page cache, e.g. large folios for a file just written).
 */
export function rssPartsOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rss: statusField(status, 'VmRSS'), anon: statusField(status, 'RssAnon'), file: statusField(status, 'RssFile') };
}

/** CPU time (ms) a process has used so far: its main thread, and all its other threads together. */
export function cpuOf(pid) {
  const ticks = (file) => {
    const f = fs.readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * (1000 / 100); // utime + stime, in clock ticks of 1/100 s
  };
  let others = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    if (tid === String(pid)) continue;
    try {
      others += ticks(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      // the thread ended meanwhile
    }
  }
  return { main: ticks(`/proc/${pid}/task/${pid}/stat`), others };
}

/** bcrypt verifications per second at `cost` with every core busy: the ceiling for signins (and password binds) per second. */
export async function bcryptCeiling(password, cost, seconds = 5) {
  const { default: bcrypt } = await import('bcrypt');
  const hash = await bcrypt.hash(password, cost);
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: os.availableParallelism() }, async () => {
      while (Date.now() < until) {
        await bcrypt.compare(password, hash);
        done++;
      }
    }),
  );
  return done / seconds;
}
