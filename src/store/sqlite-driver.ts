/**
 * Node's built-in `node:sqlite` as the store sees it: one shape for values going in and rows and
 * errors coming out, whichever thread ran the statement (the event loop's reader, the writer's
 * worker thread, or a connection of a script or test).
 *
 * - Values bound: a whole number is bound as an integer (node:sqlite binds every JS number as a
 *   REAL, which a TEXT column would keep as "5.0"), booleans as 1/0, a Date as its milliseconds,
 *   undefined as NULL, as the sqlite3 package did.
 * - Rows: objects with a null prototype (a column named `__proto__` or `constructor` is only a
 *   column); BLOBs as Buffers (node:sqlite gives Uint8Arrays; PostgreSQL's bytea is a Buffer too);
 *   integers as numbers, and an integer past 2^53 as a BigInt (node:sqlite refuses to read one as
 *   a number; sqlite3 rounded it). `decodeRow` turns declared columns into numbers either way.
 * - Errors: node:sqlite's `ERR_SQLITE_ERROR` with a number becomes an Error whose `code` names
 *   SQLite's primary result (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`…) and whose message starts with
 *   it, as sqlite3's did, so the store's checks (busy, unique, not a database) read one shape.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { Row } from './handle';

export type Param = null | number | bigint | string | Uint8Array;

/** SQLite's primary result codes (the low byte of an extended one) by number. */
const PRIMARY = [
  'OK',
  'ERROR',
  'INTERNAL',
  'PERM',
  'ABORT',
  'BUSY',
  'LOCKED',
  'NOMEM',
  'READONLY',
  'INTERRUPT',
  'IOERR',
  'CORRUPT',
  'NOTFOUND',
  'FULL',
  'CANTOPEN',
  'PROTOCOL',
  'EMPTY',
  'SCHEMA',
  'TOOBIG',
  'CONSTRAINT',
  'MISMATCH',
  'MISUSE',
  'NOLFS',
  'AUTH',
  'FORMAT',
  'RANGE',
  'NOTADB',
  'NOTICE',
  'WARNING',
];

export interface SqliteError extends Error {
  code: string;
  /** SQLite's primary result code. */
  errno: number;
  /** The extended result code (SQLITE_CONSTRAINT_UNIQUE is 2067). */
  errcode: number;
}

/** What an error thrown by node:sqlite carries (also what the writer's thread posts back). */
export interface RawError {
  message: string;
  code?: string;
  errcode?: number;
  errstr?: string;
}

/** node:sqlite's error as the store reads it (anything else unchanged). */
export function sqliteError(err: unknown): unknown {
  const e = err as RawError | null;
  if (!e || typeof e !== 'object' || e.code !== 'ERR_SQLITE_ERROR' || typeof e.errcode !== 'number') {
    if (e && !(e instanceof Error) && typeof e.message === 'string') return Object.assign(new Error(e.message), e);
    return err;
  }
  const name = `SQLITE_${PRIMARY[e.errcode & 0xff] ?? 'ERROR'}`;
  const out = new Error(`${name}: ${e.message}`) as SqliteError;
  out.code = name;
  out.errno = e.errcode & 0xff;
  out.errcode = e.errcode;
  return out;
}

/** One bound value, as the sqlite3 package bound it (see the top of this file). */
export function bindable(v: unknown): Param {
  switch (typeof v) {
    case 'number':
      return Number.isSafeInteger(v) ? BigInt(v) : v;
    case 'string':
    case 'bigint':
      return v;
    case 'boolean':
      return v ? 1n : 0n;
    case 'undefined':
      return null;
    default:
      if (v === null || v instanceof Uint8Array) return v;
      if (v instanceof Date) return BigInt(v.valueOf());
      throw new TypeError(`a ${Object.prototype.toString.call(v)} cannot be bound to a SQLite parameter`);
  }
}

export const bindAll = (params: readonly unknown[] | undefined): Param[] => (params ? params.map(bindable) : []);

const MIN = BigInt(Number.MIN_SAFE_INTEGER);
const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A value read with BigInts on: a number when it fits exactly. */
export const exactNumber = (v: unknown): unknown => (typeof v === 'bigint' && v >= MIN && v <= MAX ? Number(v) : v);

/** Buffers for BLOBs, in place (rows are the caller's own). */
export function blobsAsBuffers(row: Record<string, unknown>): Row {
  for (const k in row) {
    const v = row[k];
    if (typeof v === 'object' && v !== null && !Buffer.isBuffer(v) && v instanceof Uint8Array) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  return row;
}

/**
 * Rows of a statement that may write (a claim's RETURNING, a script's statement): read with
 * BigInts on, since running it again after a refused integer would write twice.
 */
export function rowsWithBigInts(stmt: StatementSync, params: readonly Param[]): Row[] {
  stmt.setReadBigInts(true);
  const rows = stmt.all(...params) as Array<Record<string, unknown>>;
  for (const row of rows) {
    for (const k in row) if (typeof row[k] === 'bigint') row[k] = exactNumber(row[k]);
    blobsAsBuffers(row);
  }
  return rows;
}

/** The rows sent back by the writer's thread: column names and arrays of values. */
export type PackedRows = [names: string[], values: unknown[][]];

export function unpackRows([names, values]: PackedRows): Row[] {
  const rows: Row[] = new Array(values.length);
  for (let r = 0; r < values.length; r++) {
    const v = values[r];
    const row = Object.create(null) as Record<string, unknown>;
    for (let i = 0; i < names.length; i++) {
      const x = v[i];
      row[names[i]] = typeof x === 'object' && x !== null && x instanceof Uint8Array ? Buffer.from(x.buffer, x.byteOffset, x.byteLength) : x;
    }
    rows[r] = row;
  }
  return rows;
}

/** What a connection of the knex client (sqlite-knex.ts) answers: the writer's thread or one here. */
export interface SqliteConnection {
  all(sql: string, params: readonly Param[]): Promise<Row[]>;
  run(sql: string, params: readonly Param[]): Promise<{ changes: number; lastInsertRowid: number }>;
  exec(sql: string): Promise<void>;
  /**
   * BEGIN IMMEDIATE, waiting at most `waitMs` for the write lock (not the connection's whole busy
   * timeout): a write that already waited in the queue waits only what is left of its time.
   */
  begin(waitMs: number): Promise<void>;
  /** Several statements one after another, each with its own answer (a group-commit flush). */
  many(items: ReadonlyArray<ManyItem>): Promise<Array<{ rows: Row[] } | { error: unknown }>>;
  close(): Promise<void>;
  /** False once it can no longer answer (its thread stopped): the pool drops it. */
  readonly alive: boolean;
}

export interface ManyItem {
  sql: string;
  params: readonly Param[];
  /** True: its rows are wanted (a claim); false: it is run. */
  rows: boolean;
}

/** BEGIN IMMEDIATE on `db` with a busy wait of `waitMs`, its own busy timeout restored after. */
export function beginWithin(db: DatabaseSync, waitMs: number): void {
  const full = Number((db.prepare('PRAGMA busy_timeout').get() as { timeout: number }).timeout);
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.min(full, Math.floor(waitMs)))}`);
  try {
    db.exec('BEGIN IMMEDIATE');
  } finally {
    db.exec(`PRAGMA busy_timeout = ${full}`);
  }
}

/**
 * A connection on the calling thread, for scripts, tests and the look at a file before the store
 * opens it. The server's own writes never run here: they go to the writer's thread (sqlite-writer.ts).
 */
export class InThreadConnection implements SqliteConnection {
  private readonly statements = new Map<string, StatementSync>();
  alive = true;

  constructor(private readonly db: DatabaseSync) {}

  static open(filename: string, pragmas: string, o: { readOnly?: boolean } = {}): InThreadConnection {
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(filename, { readOnly: o.readOnly ?? false });
      if (pragmas) db.exec(pragmas);
      return new InThreadConnection(db);
    } catch (err) {
      db?.close();
      throw sqliteError(err);
    }
  }

  private prepared(sql: string): StatementSync {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= 200) this.statements.delete(this.statements.keys().next().value!);
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  private now<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(sqliteError(err));
    }
  }

  all(sql: string, params: readonly Param[]): Promise<Row[]> {
    return this.now(() => rowsWithBigInts(this.prepared(sql), params));
  }

  run(sql: string, params: readonly Param[]) {
    return this.now(() => {
      const stmt = this.prepared(sql);
      stmt.setReadBigInts(false);
      const r = stmt.run(...params);
      return { changes: Number(r.changes), lastInsertRowid: Number(r.lastInsertRowid) };
    });
  }

  exec(sql: string): Promise<void> {
    return this.now(() => this.db.exec(sql));
  }

  begin(waitMs: number): Promise<void> {
    return this.now(() => beginWithin(this.db, waitMs));
  }

  async many(items: ReadonlyArray<ManyItem>) {
    const out: Array<{ rows: Row[] } | { error: unknown }> = [];
    for (const item of items) {
      try {
        out.push({ rows: item.rows ? await this.all(item.sql, item.params) : (await this.run(item.sql, item.params), []) });
      } catch (error) {
        out.push({ error });
      }
    }
    return out;
  }

  close(): Promise<void> {
    this.alive = false;
    this.statements.clear();
    return this.now(() => this.db.close());
  }
}
