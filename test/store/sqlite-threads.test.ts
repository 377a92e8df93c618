// The SQLite store's two threads (store/sqlite-writer.ts, read-pool.ts): writes in the writer's
// thread, reads on the event loop. A writer thread that dies is noticed (what waited on it fails
// as `unavailable`, the next write starts a new one); rows keep one shape from either thread; a
// read never waits for the write lock; a full disk and a read-only file are said in words.
import t, { type Test } from 'tap';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { loadConfig } from '../../src/config';
import { internalsOf } from '../../src/store/connection';
import { open, storeError } from '../../src/store/handle';
import { isAppError } from '../../src/errors';
import type { WorkerConnection } from '../../src/store/sqlite-writer';
import { tempDir, TEST_STORE } from '../helpers/server';
import { openTestStore } from '../helpers/db';

const sqliteOnly = { skip: TEST_STORE === 'postgres' && 'the SQLite store' };

async function setup(t: Test, flags: Record<string, string> = {}) {
  const config = loadConfig({ dataDir: tempDir(t), ...flags }, {});
  const store = await openTestStore(t, config);
  return { config, store, h: open(store.root), knex: internalsOf(store).knex };
}

/** The writer thread's connection (knex's pool holds it), lent and given back at once. */
async function writerOf(knex: ReturnType<typeof internalsOf>['knex']): Promise<WorkerConnection> {
  const conn = (await knex.client.acquireConnection()) as WorkerConnection;
  await knex.client.releaseConnection(conn);
  return conn;
}

t.test('a writer thread that dies: what waited fails as unavailable, and the next write starts another', sqliteOnly, async (t) => {
  const { h, knex } = await setup(t);
  const writer = await writerOf(knex);
  // A statement that keeps the thread busy, then the thread ends under it.
  const long = writer.all('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) AS n FROM c', []);
  await new Promise((r) => setTimeout(r, 50));
  await writer.kill();
  const err = await long.then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(isAppError(err) && err.code === 'unavailable', `the waiting statement: ${String(err)}`);
  t.notOk(writer.alive, 'the connection knows it is dead');
  await h.run("INSERT INTO gatehouse_setting (name, value) VALUES ('after', 'the crash')", []);
  const rows = await h.all("SELECT value FROM gatehouse_setting WHERE name = 'after'", []);
  t.equal(rows[0]?.value, 'the crash', 'a new writer thread took the write');
  t.not(await writerOf(knex), writer, 'a new connection');
});

t.test('rows have one shape from either thread: a null prototype, Buffers, exact integers', sqliteOnly, async (t) => {
  const { h, store } = await setup(t);
  const sql = "SELECT 1 AS one, x'00ff' AS blob, 9007199254740993 AS big, 'a' AS text";
  const fromReader = (await h.all(sql, []))[0];
  const inTransaction = await store.transaction(async (tx) => (await open(tx).all(sql, []))[0]);
  for (const [where, row] of [
    ['the reader (event loop)', fromReader],
    ['a transaction (writer thread)', inTransaction],
  ] as const) {
    t.equal(Object.getPrototypeOf(row), null, `${where}: a null prototype`);
    t.equal(row.one, 1, `${where}: a number`);
    t.ok(Buffer.isBuffer(row.blob) && (row.blob as Buffer).equals(Buffer.from([0, 255])), `${where}: a BLOB is a Buffer`);
    t.equal(row.big, 9007199254740993n, `${where}: an integer past 2^53 is an exact BigInt`);
  }
  // A whole number is bound as an integer (node:sqlite would bind a REAL, and a TEXT column would keep "5.0").
  t.same(await h.all('SELECT typeof(?) AS t, CAST(? AS TEXT) AS s', [5, 5]), [{ t: 'integer', s: '5' }]);
});

t.test('another process holding the write lock for seconds delays no read', sqliteOnly, async (t) => {
  const { h, config } = await setup(t, { busyTimeout: '5000' });
  const holder = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'lock-holder.js'), path.join(config.dataDir, 'gatehouse.sqlite'), '2500'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const released = new Promise<void>((r) => holder.once('exit', () => r()));
  let done = false;
  void released.then(() => (done = true));
  await new Promise((r) => holder.stdout.once('data', r));
  // A write queued behind the lock (its BEGIN IMMEDIATE waits in the writer's thread) ...
  const write = h.run("INSERT INTO gatehouse_setting (name, value) VALUES ('queued', 'behind the lock')", []);
  // ... while reads, through the handle and through the query builder, answer at once, many times over.
  const started = Date.now();
  let slowest = 0;
  for (let i = 0; i < 200; i++) {
    const t0 = Date.now();
    await h.all('SELECT count(*) AS n FROM user_account', []);
    await (h.k as ReturnType<typeof internalsOf>['knex'])('gatehouse_setting').select('name');
    slowest = Math.max(slowest, Date.now() - t0);
  }
  t.notOk(done, `200 reads of each kind answered while the lock was held (${Date.now() - started} ms; slowest ${slowest} ms)`);
  await write;
  t.ok(done, 'the write went in once the lock was gone');
  t.same(await h.all("SELECT value FROM gatehouse_setting WHERE name = 'queued'", []), [{ value: 'behind the lock' }]);
});

t.test('a full disk and a read-only store file are said in words', async (t) => {
  const error = (code: string, text: string) => Object.assign(new Error(`${code}: ${text}`), { code });
  t.match(storeError(error('SQLITE_FULL', 'database or disk is full')), { code: 'unavailable', message: /the store's disk is full/ });
  t.match(storeError(error('SQLITE_READONLY', 'attempt to write a readonly database')), { code: 'unavailable', message: /store file cannot be written/ });
});

t.test('transactions queued behind a held lock each wait only what is left of their busy timeout', sqliteOnly, async (t) => {
  // An outside retest: ten sign-ins behind a lock another process held were answered 2, 4, 6...
  // seconds later (one busy timeout after another: each waited its whole timeout once it had the
  // writer connection). Now a transaction's BEGIN waits what is left of its timeout since it asked.
  const { store, config, knex } = await setup(t, { busyTimeout: '1000' });
  const writer = await writerOf(knex);
  const asked: number[] = [];
  const begin = writer.begin.bind(writer);
  writer.begin = (waitMs: number) => (asked.push(waitMs), begin(waitMs));
  const holder = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'lock-holder.js'), path.join(config.dataDir, 'gatehouse.sqlite'), 'stdin'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.teardown(() => void holder.stdin.end());
  await new Promise((r) => holder.stdout.once('data', r));
  const write = () => store.transaction(async (tx) => open(tx).run("INSERT INTO gatehouse_setting (name, value) VALUES ('x', 'y')", []));
  const results = await Promise.allSettled([write(), write(), write()]);
  t.ok(
    results.every((r) => r.status === 'rejected' && isAppError(r.reason) && r.reason.code === 'unavailable'),
    'each told the store is busy',
  );
  t.equal(asked.length, 3, 'each began once');
  t.ok(asked[0]! > 500, `the first waits (nearly) its whole busy timeout (${asked[0]} ms)`);
  t.ok(asked[1]! < 500 && asked[2]! < 500, `the ones that queued behind it wait what is left (${asked.slice(1).join(', ')} ms)`);
  holder.stdin.end();
  await new Promise((r) => holder.once('exit', r));
  await write();
  t.pass('a transaction goes in once the lock is gone');
});
