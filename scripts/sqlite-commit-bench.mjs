// What a durable commit (WAL, synchronous=FULL) costs the event loop: node:sqlite runs it on the
// calling thread (the fsync blocks the loop), sqlite3 on libuv's pool. Usage: node scripts/sqlite-commit-bench.mjs DIR [--n 300]
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { monitorEventLoopDelay } from 'node:perf_hooks';
const dir = process.argv[2];
const N = Number(process.argv[process.argv.indexOf('--n') + 1] || 300);
const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
async function run(name, fn) {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const c0 = process.cpuUsage(),
    m0 = process.threadCpuUsage(),
    t0 = performance.now();
  const lat = await fn();
  const wall = performance.now() - t0,
    c = process.cpuUsage(c0),
    m = process.threadCpuUsage(m0);
  h.disable();
  console.log(
    `| ${name} | ${((wall * 1000) / N).toFixed(0)} | ${pct(lat, 0.5).toFixed(2)} / ${pct(lat, 0.99).toFixed(2)} | ${((m.user + m.system) / N).toFixed(0)} | ${((c.user + c.system) / N).toFixed(0)} | ${(h.max / 1e6).toFixed(1)} |`,
  );
}
for (const f of fs.readdirSync(dir)) if (f.startsWith('commit.')) fs.rmSync(path.join(dir, f));
const schema = 'CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)';
console.log(
  '| driver, one commit = 16 inserts | wall µs per commit | commit latency ms p50 / p99 | main-thread CPU µs per commit | all-thread CPU µs per commit | longest event-loop stall ms |',
);
console.log('|---|---|---|---|---|---|');
for (let round = 0; round < 2; round++) {
  await run('node:sqlite (sync, main thread)', async () => {
    const db = new DatabaseSync(path.join(dir, 'commit.node.sqlite'));
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
    db.exec(schema);
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const lat = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      db.exec('BEGIN IMMEDIATE');
      for (let j = 0; j < 16; j++) ins.run('x'.repeat(200));
      db.exec('COMMIT');
      lat.push(performance.now() - t);
      await new Promise((r) => setImmediate(r));
    }
    db.close();
    return lat;
  });
  // Gatehouse no longer depends on sqlite3: this row runs only where it is installed beside (npm install --no-save sqlite3@6).
  const sqlite3 = await import('sqlite3').then(
    (m) => m.default,
    () => null,
  );
  if (sqlite3 === null) return console.log('sqlite3 (libuv pool): not installed, skipped');
  await run('sqlite3 (libuv pool)', async () => {
    const db = await new Promise((res, rej) => {
      const d = new sqlite3.Database(path.join(dir, 'commit.s3.sqlite'), (e) => (e ? rej(e) : res(d)));
    });
    const exec = (sql) => new Promise((res, rej) => db.exec(sql, (e) => (e ? rej(e) : res())));
    await exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;');
    await exec(schema);
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const lat = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await exec('BEGIN IMMEDIATE');
      await Promise.all(Array.from({ length: 16 }, () => new Promise((res, rej) => ins.run('x'.repeat(200), (e) => (e ? rej(e) : res())))));
      await exec('COMMIT');
      lat.push(performance.now() - t);
    }
    await new Promise((r) => ins.finalize(r));
    await new Promise((r) => db.close(r));
    return lat;
  });
}
