/**
 * Opening the store: SQLite (default; WAL, busy_timeout, foreign keys) or PostgreSQL.
 * Migrations run on every open; knex's migration lock makes concurrent opens safe.
 * This folder is the only code that knows knex: everything else holds the opaque Tx.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Config } from '../config';
import type { Clock } from '../clock';
import { AppError } from '../errors';
import { Dialect, Handle, isUnavailable, op, rawRows, rawRun, seal, storeError, transactionHandle, Tx } from './handle';
import { sqliteBatch, sqliteWriter } from './sqlite-batch';
import { GroupCommit } from './group-commit';
import { LATEST_MIGRATION, migrationSource } from './migrations';
import { damagedSqlite, identify, isNotADatabase, MigrationReport, refuseStranger, report, sqliteFileHasContent } from './identity';
import { ReadPool } from './read-pool';
import { PgStatements } from './pg-statements';
import { BEGIN_IMMEDIATE, beginWithin, nodeSqliteKnex, type RootReader } from './sqlite-knex';
import { DatabaseSync } from 'node:sqlite';
import { InThreadConnection } from './sqlite-driver';
import { WorkerConnection } from './sqlite-writer';

export type { Dialect, Tx } from './handle';

export interface Store {
  readonly dialect: Dialect;
  /** A human-safe description (no credentials). */
  readonly location: string;
  /** True when this opening made the schema from nothing: a new, empty store. */
  readonly created: boolean;
  /** The root handle: each statement commits on its own; hot reads go to the read pool. */
  readonly root: Tx;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const SQLITE_FILE = 'gatehouse.sqlite';

/** Refuses a SQLite data directory that holds no store (not_found, naming the path). */
export function assertStoreExists(config: Config): void {
  if (config.db) return;
  const file = path.join(config.dataDir, SQLITE_FILE);
  // Missing only when the file is not there (ENOENT) in a folder that is one or is not there yet.
  // A path through a file (ENOTDIR: Node 22 and later no longer throw it with throwIfNoEntry) or
  // one without access is not "missing": opening the store says what is wrong.
  const found = (p: string): fs.Stats | string => {
    try {
      return fs.statSync(p);
    } catch (err) {
      return (err as NodeJS.ErrnoException).code ?? 'error';
    }
  };
  const dir = found(file) === 'ENOENT' ? found(config.dataDir) : null;
  const missing = dir === 'ENOENT' || (dir instanceof fs.Stats && dir.isDirectory());
  if (missing) {
    throw new AppError('not_found', `no Gatehouse store at ${file}: check {--data-dir} (gatehouse serve, bootstrap-admin or migrate make a new one)`);
  }
}

export function prepareDataDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new AppError('unavailable', `data directory ${dir} is not usable (${reason})`);
  }
}

/**
 * The store holds password hashes, TOTP secrets and signing keys: its file is created 0600
 * whatever the folder or umask (SQLite gives the -wal and -shm files the same mode), and an
 * older, looser file is tightened.
 */
function protectStoreFiles(filename: string): void {
  fs.closeSync(fs.openSync(filename, fs.constants.O_CREAT | fs.constants.O_WRONLY, 0o600));
  for (const file of [filename, `${filename}-wal`, `${filename}-shm`]) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat && (stat.mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  }
}

/** A warning when other local users may list the data folder (null when it is private or on PostgreSQL). */
export function dataDirWarning(config: Config): string | null {
  if (config.db) return null;
  const stat = fs.statSync(config.dataDir, { throwIfNoEntry: false });
  if (!stat || (stat.mode & 0o077) === 0) return null;
  return `the data directory ${config.dataDir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); chmod 700 it`;
}

/**
 * knex prints pool and driver trouble (with stacks) to the console; every such failure also
 * reaches the caller as an error, which the front ends report in one line.
 */
const QUIET = { warn() {}, error() {}, deprecate() {}, debug() {} };

/** The writer connection's set-up: the busy wait first, so switching to WAL waits for another process's lock too. */
const writerPragmas = (busyTimeoutMs: number) =>
  `PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;`;

/** The store's files, made private, and its main-thread reader (opened first: knex sends root reads to it). */
function sqliteReader(config: Config): ReadPool {
  prepareDataDir(config.dataDir);
  const filename = path.join(config.dataDir, SQLITE_FILE);
  try {
    protectStoreFiles(filename);
  } catch (err) {
    throw new AppError('unavailable', `the store file ${filename} is not usable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return ReadPool.open(filename, config.busyTimeout);
}

/**
 * The store's knex on SQLite: writes and transactions on the writer's thread, root reads on
 * `reader`. The thread starts at the first write, so a command that only reads never starts one.
 */
function sqliteKnex(config: Config, reader: RootReader, started: () => void): Knex {
  const filename = path.join(config.dataDir, SQLITE_FILE);
  const open = () => {
    started();
    return WorkerConnection.open(filename, writerPragmas(config.busyTimeout));
  };
  return immediateTransactions(nodeSqliteKnex({ open, reader }, { log: QUIET, acquireConnectionTimeout: config.busyTimeout + 10000 }), config.busyTimeout);
}

/**
 * The last connection to close folds the log into the file and removes it, unless it is read-only:
 * a store only read from (its writer never started) is closed last by a read-write connection
 * opened for that, which never waits (another process still using the store keeps the log).
 */
function foldLog(filename: string): void {
  try {
    const db = new DatabaseSync(filename, { timeout: 0 });
    // A connection that never read never opened the log, and would leave it alone.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    db.close();
  } catch {
    // busy or gone: the log stays, as it would with another process on the store
  }
}

/**
 * The store's transactions on SQLite begin IMMEDIATE: they take the write lock at BEGIN, waiting
 * (busy timeout) for another process's writes to end. A deferred transaction that reads first
 * fails busy at its first write whenever another process (a running server, a shell command)
 * committed since its read, without waiting; most of ours read before they write.
 *
 * The wait counts from when the transaction was asked for: one that queued for the writer
 * connection behind others (each waiting on a lock another process holds) waits only what is
 * left of its busy timeout, so every request behind a held lock is answered within it, not one
 * busy timeout after another.
 */
function immediateTransactions(knex: Knex, busyTimeoutMs: number): Knex {
  type Trx = { begin(conn: unknown): Promise<unknown>; query(conn: unknown, sql: string): Promise<unknown> };
  const client = knex.client as { transaction(...args: unknown[]): Trx };
  const make = client.transaction.bind(client);
  client.transaction = (...args: unknown[]) => {
    const asked = Date.now();
    const trx = make(...args);
    trx.begin = (conn) => {
      beginWithin.set(conn as object, Math.max(0, busyTimeoutMs - (Date.now() - asked)));
      return trx.query(conn, BEGIN_IMMEDIATE);
    };
    return trx;
  };
  return knex;
}

/**
 * One connection to a SQLite file in a thread of its own (the writer's: sqlite-writer.ts), set up
 * by `pragmas`: its waits for locks (busy timeout) and for the disk happen off the event loop. For
 * the backup's snapshot and the tests' own connection to a store a server in the same process uses.
 */
export function sqliteThreadKnex(filename: string, pragmas: string, busyTimeoutMs: number): Knex {
  return nodeSqliteKnex(
    { open: () => WorkerConnection.open(filename, `PRAGMA busy_timeout = ${busyTimeoutMs}; ${pragmas}`) },
    { log: QUIET, acquireConnectionTimeout: busyTimeoutMs + 10000 },
  );
}

/**
 * One connection to a SQLite file on this thread, set up by `pragmas`, for scripts, tests, the
 * backup and the look at a file before the store opens it (the server's writer is a thread of its
 * own: sqlite-writer.ts). Reads through it wait for nothing but SQLite.
 */
export function sqliteFileKnex(filename: string, pragmas: string, busyTimeoutMs: number): Knex {
  return nodeSqliteKnex(
    { open: async () => InThreadConnection.open(filename, `PRAGMA busy_timeout = ${busyTimeoutMs}; ${pragmas}`) },
    { log: QUIET, acquireConnectionTimeout: busyTimeoutMs + 10000 },
  );
}

function postgresKnex(config: Config, url: string): Knex {
  return knexFactory({
    client: 'pg',
    log: QUIET,
    connection: { connectionString: url, statement_timeout: config.busyTimeout + 25000 } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: 10,
      // Like SQLite's busy_timeout: a lock held elsewhere is waited for a bounded time, then the
      // request answers 503 (lock_not_available) instead of hanging.
      afterCreate(conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.query(`SET lock_timeout = ${Math.max(1, config.busyTimeout)}`, (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: config.busyTimeout + 10000,
  });
}

export function describeLocation(config: Config): string {
  if (!config.db) return path.join(config.dataDir, SQLITE_FILE);
  const u = new URL(config.db);
  return `postgres://${u.hostname}${u.port ? ':' + u.port : ''}${u.pathname}`;
}

/** What store code (only) may reach behind a Store: its driver, for copy and statistics. */
const internals = new WeakMap<Store, { knex: Knex; root: Handle }>();
export function internalsOf(store: Store): { knex: Knex; root: Handle } {
  const i = internals.get(store);
  if (!i) throw new Error('not a store opened by openStore');
  return i;
}

/** PostgreSQL's answers when a connection is refused: the database, the role or its password. */
const CONNECTION_REFUSALS: Record<string, string> = {
  '3D000': 'the database does not exist',
  '28000': 'the role or its password was refused',
  '28P01': 'the role or its password was refused',
  '42501': 'the role may not connect to this database',
  '3F000': 'the schema does not exist',
};

export interface OpenOptions {
  /** False: open without migrating (a newer store is then let through, to be reported). */
  migrate?: boolean;
}

/**
 * A SQLite file is looked at before the store's own connection touches it (that connection sets
 * WAL mode, which rewrites the header): one that is not SQLite, or not Gatehouse's, is refused as it is.
 */
async function checkSqliteFile(config: Config, o: OpenOptions): Promise<void> {
  prepareDataDir(config.dataDir);
  const file = path.join(config.dataDir, SQLITE_FILE);
  if (!sqliteFileHasContent(file)) return;
  const look = sqliteFileKnex(file, `PRAGMA busy_timeout = ${config.busyTimeout};`, config.busyTimeout);
  try {
    refuseStranger(file, await identify(look, 'sqlite'), { newer: o.migrate === false ? 'report' : 'refuse' });
  } catch (err) {
    throw isNotADatabase(err) ? damagedSqlite(file) : err;
  } finally {
    await look.destroy();
  }
}

export async function openStore(config: Config, clock: Clock, o: OpenOptions = {}): Promise<Store> {
  const dialect: Dialect = config.db ? 'postgres' : 'sqlite';
  if (dialect === 'sqlite') await checkSqliteFile(config, o);
  const readers: ReadPool | null = config.db ? null : sqliteReader(config);
  let writerStarted = false;
  const knex = config.db ? postgresKnex(config, config.db) : sqliteKnex(config, readers!, () => void (writerStarted = true));
  let created = false;
  const location = describeLocation(config);
  try {
    if (dialect === 'postgres') await withAdvisoryLock(knex, async () => void (created = await migrate(knex, dialect, location, o)));
    else created = await migrate(knex, dialect, location, o);
  } catch (err) {
    await readers?.close();
    // The opening's own error is the one to report, not the pool's on the way out.
    await knex.destroy().catch(() => {});
    if (dialect === 'sqlite' && isNotADatabase(err)) throw damagedSqlite(location);
    const code = (err as { code?: string }).code;
    // PostgreSQL's refusals at connection, said plainly (the server's own text can name more).
    const refused = code === undefined ? undefined : CONNECTION_REFUSALS[code];
    if (refused)
      throw new AppError('unavailable', `the store at ${describeLocation(config)} could not be opened: ${refused} (${code})`, { retryAfter: 2, cause: err });
    if (isUnavailable(err)) {
      throw new AppError('unavailable', `the store at ${describeLocation(config)} could not be opened (${code ?? 'timed out'})`, { retryAfter: 2, cause: err });
    }
    throw err;
  }
  const pool = readers;
  const prepared = dialect === 'postgres' ? new PgStatements(knex) : null;
  const writer = dialect === 'sqlite' ? sqliteWriter(knex) : null;
  const root: Handle = {
    k: knex,
    dialect,
    clock,
    inTransaction: false,
    all: pool ? (sql, params) => pool.all(sql, params) : (sql, params) => prepared!.all(sql, params),
    run: writer ? writer.run : rawRun(knex),
    claim: writer ? writer.claim : (sql, params) => rawRows(knex, sql, params),
    batch: (fn) => writes.run(fn),
  };
  const writes = new GroupCommit(
    root,
    (fn, waitMs) => (dialect === 'sqlite' ? sqliteBatch(knex, root, fn, waitMs) : knex.transaction((trx) => fn(transactionHandle(root, trx)))),
    dialect === 'sqlite' ? config.busyTimeout : Infinity,
  );
  const store: Store = {
    dialect,
    location: describeLocation(config),
    created,
    root: seal(root),
    async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      try {
        return await knex.transaction((trx) => fn(seal(transactionHandle(root, trx))));
      } catch (err) {
        throw storeError(err);
      }
    },
    async close() {
      // The reader first: the writer's connection, closing last, folds the log into the file and removes it.
      await pool?.close();
      await knex.destroy();
      if (dialect === 'sqlite' && !writerStarted) foldLog(path.join(config.dataDir, SQLITE_FILE));
    },
  };
  internals.set(store, { knex, root });
  return store;
}

/**
 * Refuses a store that is not Gatehouse's or is newer (store/identity.ts), then migrates. Only
 * takes the migration lock (a write) when something is pending, so opening a store that a running
 * server is busy writing to does not queue behind it. True when the store was empty.
 */
async function migrate(knex: Knex, dialect: Dialect, location: string, o: OpenOptions): Promise<boolean> {
  const identity = await identify(knex, dialect);
  refuseStranger(location, identity, { newer: o.migrate === false ? 'report' : 'refuse' });
  const r = report(identity);
  if (o.migrate !== false && r.pending.length > 0) await knex.migrate.latest({ migrationSource });
  return r.applied.length === 0;
}

/** Arbitrary, fixed: the advisory lock key under which PostgreSQL instances migrate one at a time. */
const MIGRATION_LOCK_KEY = 63360001;

/**
 * Instances starting together on one PostgreSQL database migrate once: each waits for a
 * session-level advisory lock (knex's own lock table answers "locked" instead of waiting).
 */
async function withAdvisoryLock(knex: Knex, fn: () => Promise<void>): Promise<void> {
  const conn = await knex.client.acquireConnection();
  try {
    await conn.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await fn();
    } finally {
      await conn.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await knex.client.releaseConnection(conn);
  }
}

export type SchemaStatus = MigrationReport;

/** The store's migrations beside this executable's: applied, pending, and unknown (a newer Gatehouse's). */
export const schemaStatus = op(async (h): Promise<SchemaStatus> => report(await identify(h.k as Knex, h.dialect)));

/** The SQLite library inside this executable (Node's own, node:sqlite) and the store schema it writes (`gatehouse version`). */
export async function engineVersions(): Promise<{ sqlite: string; schema: string }> {
  return { sqlite: process.versions.sqlite ?? 'unknown', schema: LATEST_MIGRATION };
}
