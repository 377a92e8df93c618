/**
 * The SQLite writer: one `node:sqlite` connection in a worker thread of its own. Every write of
 * the store runs there (knex's statements, group-commit batches, single writes and claims), so
 * BEGIN IMMEDIATE's wait for the write lock (busy_timeout), COMMIT and its flush (synchronous =
 * FULL) block that thread, never the event loop: a shell command holding the lock for seconds, or
 * a disk whose flush takes 10 ms, delays writes only, while reads go on (read-pool.ts).
 *
 * A knex transaction is interactive (our code runs between its statements), so each statement is
 * a message: SQL and bound values over, rows or an error back. The thread keeps its statements
 * prepared (by SQL text) and answers in order.
 *
 * A thread that stops (a crash inside it, an exit) is noticed at once: every statement waiting on
 * it fails with the store's `unavailable` error, and the connection reports itself dead, so knex's
 * pool drops it and the next statement starts a new thread (sqlite-knex.ts validates it).
 * SQLite's own journal makes the transaction it was in undone.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors';
import { ManyItem, PackedRows, Param, RawError, SqliteConnection, sqliteError, unpackRows } from './sqlite-driver';
import type { Row } from './handle';

/**
 * The thread's code, evaluated on its own (no bundle, no loader): node:sqlite and the messages.
 * Statements read integers as BigInts (an integer past 2^53 cannot be read otherwise, and a
 * write's RETURNING cannot be run twice to retry) and return arrays, which cost less to send.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const MIN = BigInt(Number.MIN_SAFE_INTEGER), MAX = BigInt(Number.MAX_SAFE_INTEGER);
let db = null;
const statements = new Map();
function prepared(sql) {
  let s = statements.get(sql);
  if (s === undefined) {
    if (statements.size >= 200) statements.delete(statements.keys().next().value);
    const stmt = db.prepare(sql);
    stmt.setReadBigInts(true);
    stmt.setReturnArrays(true);
    s = { stmt, names: stmt.columns().map((c) => c.name) };
    statements.set(sql, s);
  }
  return s;
}
function all(sql, params) {
  const s = prepared(sql);
  const values = s.stmt.all(...params);
  for (const row of values) for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (typeof v === 'bigint' && v >= MIN && v <= MAX) row[i] = Number(v);
  }
  return [s.names, values];
}
function run(sql, params) {
  const r = prepared(sql).stmt.run(...params);
  return [Number(r.changes), Number(r.lastInsertRowid)];
}
const errorOf = (e) => ({ message: String(e && e.message), code: e && e.code, errcode: e && e.errcode, errstr: e && e.errstr });
function answer(op, a, b) {
  switch (op) {
    case 'all': return all(a, b);
    case 'run': return run(a, b);
    case 'exec': db.exec(a); return null;
    case 'begin': {
      // BEGIN IMMEDIATE waiting at most a ms for the lock, the connection's busy timeout restored after.
      const full = Number(db.prepare('PRAGMA busy_timeout').get().timeout);
      db.exec('PRAGMA busy_timeout = ' + Math.max(0, Math.min(full, Math.floor(a))));
      try { db.exec('BEGIN IMMEDIATE'); } finally { db.exec('PRAGMA busy_timeout = ' + full); }
      return null;
    }
    case 'many': return a.map(([sql, params, rows]) => {
      try { return [0, rows ? all(sql, params) : (run(sql, params), null)]; } catch (e) { return [1, errorOf(e)]; }
    });
    case 'open':
      db = new DatabaseSync(workerData.filename);
      try { if (workerData.pragmas) db.exec(workerData.pragmas); } catch (e) { db.close(); db = null; throw e; }
      return null;
    case 'close':
      statements.clear();
      if (db !== null) db.close();
      db = null;
      return null;
  }
  throw new Error('unknown operation ' + op);
}
parentPort.on('message', ([id, op, a, b]) => {
  let reply;
  try { reply = [id, 0, answer(op, a, b)]; } catch (e) { reply = [id, 1, errorOf(e)]; }
  parentPort.postMessage(reply);
  if (op === 'close') parentPort.close();
});
`;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** The writer thread's connection, as knex's pool holds it. */
export class WorkerConnection implements SqliteConnection {
  private readonly pending = new Map<number, Pending>();
  private next = 1;
  private stopped: string | null = null;
  private readonly exited: Promise<void>;

  private constructor(private readonly worker: Worker) {
    worker.unref(); // referenced only while a statement waits (call), so an idle store never keeps the process up
    worker.on('message', ([id, failed, payload]: [number, 0 | 1, unknown]) => {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      if (failed) p.reject(sqliteError(payload as RawError));
      else p.resolve(payload);
    });
    worker.on('error', (err) => this.stop(`failed: ${err.message}`));
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        this.stop(`exited (${code})`);
        resolve();
      }),
    );
  }

  /** Starts the thread and opens `filename` there, set up by `pragmas`. */
  static async open(filename: string, pragmas: string): Promise<WorkerConnection> {
    // execArgv: [] so the thread does not inherit loaders or inspector flags meant for the main thread.
    const conn = new WorkerConnection(new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { filename, pragmas } }));
    try {
      await conn.call('open');
    } catch (err) {
      await conn.worker.terminate();
      throw err;
    }
    return conn;
  }

  get alive(): boolean {
    return this.stopped === null;
  }

  private stop(why: string): void {
    if (this.stopped !== null) return;
    this.stopped = why;
    const err = new AppError('unavailable', `the store's writer thread ${why}; try again`, { retryAfter: 2 });
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  private call(op: string, a?: unknown, b?: unknown): Promise<unknown> {
    if (this.stopped !== null) return Promise.reject(new AppError('unavailable', `the store's writer thread ${this.stopped}; try again`, { retryAfter: 2 }));
    const id = this.next++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage([id, op, a, b]);
    });
  }

  async all(sql: string, params: readonly Param[]): Promise<Row[]> {
    return unpackRows((await this.call('all', sql, params)) as PackedRows);
  }

  async run(sql: string, params: readonly Param[]): Promise<{ changes: number; lastInsertRowid: number }> {
    const [changes, lastInsertRowid] = (await this.call('run', sql, params)) as [number, number];
    return { changes, lastInsertRowid };
  }

  async exec(sql: string): Promise<void> {
    await this.call('exec', sql);
  }

  async begin(waitMs: number): Promise<void> {
    await this.call('begin', waitMs);
  }

  async many(items: ReadonlyArray<ManyItem>): Promise<Array<{ rows: Row[] } | { error: unknown }>> {
    const answers = (await this.call(
      'many',
      items.map((i) => [i.sql, i.params, i.rows]),
    )) as Array<[0 | 1, unknown]>;
    return answers.map(([failed, payload]) =>
      failed ? { error: sqliteError(payload as RawError) } : { rows: payload === null ? [] : unpackRows(payload as PackedRows) },
    );
  }

  async close(): Promise<void> {
    if (this.stopped === null) {
      try {
        await this.call('close');
      } finally {
        await Promise.race([this.exited, new Promise((r) => setTimeout(r, 2000).unref())]);
        if (this.stopped === null) await this.worker.terminate();
      }
    }
  }

  /** For tests: ends the thread as a crash would. */
  kill(): Promise<number> {
    return this.worker.terminate();
  }
}
