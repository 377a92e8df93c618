// Child processes for the benchmark scripts: start one, wait for the line that says it is ready,
// stop it, read its RSS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
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

const statusKiB = (pid, field) => {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone already
  }
};

/** User + system CPU seconds a process has used so far, all its threads (0 once it is gone). */
const cpuSeconds = (pid) => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks of 1/100 s
  } catch {
    return 0;
  }
};

/**
 * Runs a command to its end: its wall time (ms), peak RSS (VmHWM, KiB) and CPU seconds (both read
 * every 20 ms while it runs: the last reading is at most 20 ms before it exits), and its output.
 * CPU time says what a command costs on a machine busy with other work, where wall time says less.
 */
export function measureCommand(cmd, args, env = process.env) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    const out = [];
    let err = '';
    let peak = 0;
    let cpu = 0;
    const poll = setInterval(() => {
      peak = Math.max(peak, statusKiB(child.pid, 'VmHWM'));
      cpu = Math.max(cpu, cpuSeconds(child.pid));
    }, 20);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(poll);
      const ms = performance.now() - t0;
      const stdout = Buffer.concat(out).toString('utf8');
      if (code !== 0) reject(new Error(`${path.basename(cmd)} ${args.join(' ')}: exit ${code}\n${err.slice(0, 2000)}`));
      else resolve({ ms, peakKiB: peak, cpu, stdout });
    });
  });
}

/** A port free on 127.0.0.1 at this moment. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Waits (up to 10 s) until something accepts connections on 127.0.0.1:`port`. */
export async function waitForPort(port) {
  for (let i = 0; i < 200; i++) {
    const open = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => (c.destroy(), resolve(true)));
      c.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

/**
 * A fresh database `name` on the PostgreSQL server of `serverUrl` (made again if left over): its
 * URL, and `drop` to remove it (connections still open are ended).
 */
export async function freshPgDatabase(serverUrl, name) {
  const { default: pg } = await import('pg');
  const on = async (sql) => {
    const c = new pg.Client({ connectionString: serverUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await on(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await on(`CREATE DATABASE ${name}`);
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => on(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
