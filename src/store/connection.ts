/**
 * Opening the store: SQLite (default; WAL, busy_timeout, foreign keys) or PostgreSQL.
 * Migrations run on every open; knex's migration lock makes concurrent opens safe.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Config } from '../config';
import { AppError } from '../errors';
import { LATEST_MIGRATION, migrationSource } from './migrations';
import { ReadPool, Row } from './read-pool';

export type Db = Knex | Knex.Transaction;
export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  readonly knex: Knex;
  readonly dialect: Dialect;
  /** A human-safe description (no credentials). */
  readonly location: string;
  transaction<T>(fn: (trx: Knex.Transaction) => Promise<T>): Promise<T>;
  /**
   * A read outside any transaction, on the hot path: hand-written SQL with ? placeholders over
   * allow-listed identifiers, values always bound. SQLite: read-only connections with cached
   * prepared statements; PostgreSQL: the pool.
   */
  read(sql: string, params: readonly unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

/** Read-only SQLite connections beside the writer (WAL lets them read while it writes). */
const SQLITE_READERS = 8;

export const SQLITE_FILE = 'gatehouse.sqlite';

function prepareDataDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new AppError('unavailable', `data directory ${dir} is not usable (${reason})`);
  }
}

function sqliteKnex(config: Config): Knex {
  prepareDataDir(config.dataDir);
  const filename = path.join(config.dataDir, SQLITE_FILE);
  return knexFactory({
    client: 'sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    // One connection: the sqlite3 driver serializes statements per connection anyway, and a
    // single writer avoids lock upgrades between our own connections.
    pool: {
      min: 1,
      max: 1,
      afterCreate(conn: { exec(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.exec(
          `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = ${config.busyTimeoutMs};`,
          (err) => done(err, conn),
        );
      },
    },
    acquireConnectionTimeout: config.busyTimeoutMs + 10000,
  });
}

function postgresKnex(config: Config, url: string): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString: url, statement_timeout: config.busyTimeoutMs + 25000 } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: 10,
      // Like SQLite's busy_timeout: a lock held elsewhere is waited for a bounded time, then the
      // request answers 503 (lock_not_available) instead of hanging.
      afterCreate(conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) {
        conn.query(`SET lock_timeout = ${Math.max(1, config.busyTimeoutMs)}`, (err) => done(err, conn));
      },
    },
    acquireConnectionTimeout: config.busyTimeoutMs + 10000,
  });
}

export function describeLocation(config: Config): string {
  if (!config.db) return path.join(config.dataDir, SQLITE_FILE);
  const u = new URL(config.db);
  return `postgres://${u.hostname}${u.port ? ':' + u.port : ''}${u.pathname}`;
}

export async function openStore(config: Config): Promise<Store> {
  const dialect: Dialect = config.db ? 'postgres' : 'sqlite';
  const knex = config.db ? postgresKnex(config, config.db) : sqliteKnex(config);
  try {
    if (dialect === 'postgres') await withAdvisoryLock(knex, () => migrate(knex));
    else await migrate(knex);
  } catch (err) {
    await knex.destroy().catch(() => {});
    throw toStoreError(err, 'the store could not be opened');
  }
  let readers: ReadPool | null = null;
  if (dialect === 'sqlite') {
    try {
      readers = await ReadPool.open(path.join(config.dataDir, SQLITE_FILE), SQLITE_READERS, config.busyTimeoutMs);
    } catch (err) {
      await knex.destroy().catch(() => {});
      throw toStoreError(err, 'the store could not be opened');
    }
  }
  return {
    knex,
    dialect,
    location: describeLocation(config),
    transaction: (fn) => knex.transaction(fn),
    read: readers
      ? (sql, params) => readers.all(sql, params)
      : async (sql, params) => (await knex.raw(sql, params as Knex.RawBinding[])).rows as Row[],
    async close() {
      await readers?.close();
      await knex.destroy();
    },
  };
}

/** Only take the migration lock (a write) when something is pending, so opening a store that a
 * running server is busy writing to does not queue behind it. */
async function migrate(knex: Knex): Promise<void> {
  const [, pending] = await knex.migrate.list({ migrationSource });
  if (pending.length > 0) await knex.migrate.latest({ migrationSource });
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

export async function schemaVersion(knex: Knex): Promise<{ current: string | null; latest: string }> {
  const row = await knex('knex_migrations').orderBy('id', 'desc').first('name');
  return { current: row?.name ?? null, latest: LATEST_MIGRATION };
}

/** Driver and pool failures that mean "busy or down", never a bug in a request. */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; name?: string; message?: string } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'KnexTimeoutError') return true;
  const code = e.code ?? '';
  return (
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_IOERR' ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === '57P01' || // admin_shutdown
    code === '57P03' || // cannot_connect_now
    code === '53300' || // too_many_connections
    code === '55P03' || // lock_not_available
    code === '57014' // query_canceled (statement_timeout)
  );
}

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || (e.code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(e.message ?? ''));
}

export function toStoreError(err: unknown, what: string): unknown {
  if (err instanceof AppError) return err;
  if (isUnavailable(err)) return new AppError('unavailable', `${what}: the store is busy or unavailable`, { retryAfter: 2, cause: err });
  return err;
}
