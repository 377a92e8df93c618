// Child processes for the benchmark scripts: start one, wait for the line that says it is ready,
// stop it, read its RSS.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The URL in Gatehouse's "listening" log line. */
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

export const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
