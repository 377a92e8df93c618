// Prints the executable's size and its start time to the first /ping answer (cold: empty native
// cache; warm: cache filled), from an empty folder. Usage: node scripts/startup.mjs [runs]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

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

async function once(home) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-start-'));
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
  fs.rmSync(dir, { recursive: true, force: true });
  return ms;
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-home-'));
console.log(`dist/gatehouse: ${(fs.statSync(exe).size / 1048576).toFixed(1)} MiB`);
console.log(`start to first /ping, cold (fresh store, empty native cache): ${(await once(home)).toFixed(0)} ms`);
const warm = [];
for (let i = 0; i < runs; i++) warm.push(await once(home));
warm.sort((a, b) => a - b);
console.log(`start to first /ping, warm (fresh store), median of ${runs}: ${warm[Math.floor(runs / 2)].toFixed(0)} ms`);
fs.rmSync(home, { recursive: true, force: true });
