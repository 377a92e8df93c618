// Two copies of SQLite in one process on one WAL database: a writer moving amounts between rows
// (the sum is constant in every committed state) with frequent checkpoints and WAL restarts, and a
// reader on the main thread checking the sum in one statement (one snapshot).
//   --mode mixed: writer = sqlite3 (its exec runs on libuv's pool), reader = node:sqlite (another copy)
//   --mode same:  writer = node:sqlite in a worker thread, reader = node:sqlite (one copy, one lock table)
// Why Gatehouse never opens its store with two SQLite libraries (the sqlite3 driver and node:sqlite)
// in one process: POSIX locks are per process, and each copy keeps its own table of them, so
// neither sees the other's readers or writers (sqlite.org/howtocorrupt.html, 2.2.1).
// Usage: node scripts/sqlite-mix-check.mjs DIR --mode mixed|same [--seconds 10]
// (Gatehouse no longer depends on sqlite3: --mode mixed needs it installed beside, for this check
// only: `npm install --no-save sqlite3@6` and its addon built.)
import fs from 'node:fs';
import path from 'node:path';
import { Worker, isMainThread, workerData, parentPort } from 'node:worker_threads';
import { DatabaseSync } from 'node:sqlite';

const ROWS = 2000,
  TOTAL = ROWS * 100;
const txns = (n) => {
  let s = '';
  for (let i = 0; i < n; i++) {
    const a = 1 + Math.floor(Math.random() * ROWS),
      b = 1 + Math.floor(Math.random() * ROWS),
      x = 1 + Math.floor(Math.random() * 50);
    s += `BEGIN IMMEDIATE; UPDATE t SET v = v - ${x}, pad = randomblob(300) WHERE id = ${a}; UPDATE t SET v = v + ${x}, pad = randomblob(300) WHERE id = ${b}; COMMIT;\n`;
  }
  return s;
};

if (!isMainThread) {
  // node:sqlite writer thread
  const db = new DatabaseSync(workerData.file, { timeout: 5000 });
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 20;');
  let stop = false;
  parentPort.on('message', () => (stop = true));
  let n = 0;
  const loop = () => {
    if (stop) {
      db.close();
      parentPort.postMessage(n);
      parentPort.close();
      return;
    }
    try {
      db.exec(txns(200));
      n += 200;
    } catch (e) {
      parentPort.postMessage('writer error ' + e.message);
    }
    setImmediate(loop);
  };
  loop();
} else {
  const dir = process.argv[2];
  const mode = process.argv[process.argv.indexOf('--mode') + 1];
  const seconds = Number(process.argv.includes('--seconds') ? process.argv[process.argv.indexOf('--seconds') + 1] : 10);
  const file = path.join(dir, `mix-${mode}.sqlite`);
  for (const s of ['', '-wal', '-shm']) fs.rmSync(file + s, { force: true });
  const init = new DatabaseSync(file);
  init.exec(`PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER NOT NULL, pad BLOB);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${ROWS}) INSERT INTO t SELECT i, 100, randomblob(300) FROM c;`);
  init.close();

  let writes = 0,
    writerErrors = [],
    stopWriter;
  if (mode === 'mixed') {
    const { default: sqlite3 } = await import('sqlite3');
    const w = await new Promise((res, rej) => {
      const d = new sqlite3.Database(file, (e) => (e ? rej(e) : res(d)));
    });
    await new Promise((r) => w.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 20; PRAGMA busy_timeout = 5000;', r));
    let stop = false;
    const loop = () => {
      if (stop) return;
      w.exec(txns(200), (e) => {
        if (e) writerErrors.push(e.message);
        else writes += 200;
        loop();
      });
    };
    loop();
    stopWriter = async () => {
      stop = true;
      await new Promise((r) => setTimeout(r, 300));
      await new Promise((r) => w.close(r));
    };
  } else {
    const worker = new Worker(new URL(import.meta.url), { workerData: { file } });
    worker.on('message', (m) => (typeof m === 'number' ? (writes = m) : writerErrors.push(m)));
    stopWriter = () =>
      new Promise((r) => {
        worker.once('exit', r);
        worker.postMessage('stop');
      });
  }
  await new Promise((r) => setTimeout(r, 200)); // the writer has the database open and the WAL going
  const reader = new DatabaseSync(file, { readOnly: true, timeout: 5000 });
  const sum = reader.prepare('SELECT sum(v) AS s, count(*) AS n FROM t');
  let reads = 0,
    wrong = 0,
    errors = {};
  const t0 = Date.now();
  while (Date.now() - t0 < seconds * 1000) {
    try {
      const r = sum.get();
      reads++;
      if (r.s !== TOTAL || r.n !== ROWS) {
        if (wrong++ < 3) console.log(`  torn read: sum ${r.s} (expected ${TOTAL}), rows ${r.n}`);
      }
    } catch (e) {
      errors[e.message] = (errors[e.message] ?? 0) + 1;
    }
    if (reads % 20 === 0) await new Promise((r) => setImmediate(r)); // let the sqlite3 writer's callbacks run
  }
  await stopWriter();
  reader.close();
  const check = new DatabaseSync(file);
  const ic = check
    .prepare('PRAGMA integrity_check')
    .all()
    .map((r) => r.integrity_check)
    .join('; ');
  const fin = check.prepare('SELECT sum(v) s FROM t').get();
  check.close();
  console.log(
    JSON.stringify({
      mode,
      seconds,
      writes,
      reads,
      wrongReads: wrong,
      readErrors: errors,
      writerErrors: writerErrors.slice(0, 3),
      finalSum: fin.s,
      integrity: ic,
    }),
  );
}
