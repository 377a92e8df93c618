/**
 * knex's client for `node:sqlite`: its own sqlite3 dialect (the same SQL compilers, schema and
 * migration code, DDL helpers and answer shapes the store has always had), with the driver
 * replaced. knex has no node:sqlite client; its `better-sqlite3` client would run on a thin
 * wrapper over `DatabaseSync`, but it calls the driver synchronously on the calling thread, and
 * the store's writer is a worker thread (sqlite-writer.ts), reached by messages that answer later.
 * So the client is sqlite3's, whose driver calls already wait, talking to a `SqliteConnection`:
 *
 * - the store's writer thread (WorkerConnection), or a connection on this thread for scripts and
 *   tests (InThreadConnection), as the pool's one connection; and
 * - with `reader` set (the store's main-thread reader), every read outside a transaction: a SELECT
 *   through the query builder or raw, on the root, runs there at once, without waiting for the
 *   pool's connection, which a transaction (or a BEGIN IMMEDIATE waiting for another process's
 *   write lock) may hold for seconds. WAL gives it the latest committed data.
 */
import knexFactory, { type Knex } from 'knex';
// knex's own sqlite3 dialect class (CommonJS; its driver, the sqlite3 package, is never loaded: see _driver).
import Client_SQLite3 from 'knex/lib/dialects/sqlite3';
import Runner from 'knex/lib/execution/runner';
import { bindAll, sqliteError, type SqliteConnection } from './sqlite-driver';
import type { Row } from './handle';

/** Reads outside a transaction: the store's main-thread reader (read-pool.ts). */
export interface RootReader {
  all(sql: string, params: readonly unknown[]): Promise<Row[]>;
}

export interface NodeSqliteSettings {
  /** Opens the pool's connection (the writer's thread, or one on this thread). */
  open(): Promise<SqliteConnection>;
  reader?: RootReader;
}

interface QueryObject {
  sql: string;
  bindings?: unknown[];
  method?: string;
  returning?: unknown;
  response?: unknown;
  context?: { lastID: number; changes: number };
}

export const BEGIN_IMMEDIATE = 'BEGIN IMMEDIATE;';

/**
 * How long the next BEGIN IMMEDIATE on a connection may wait for the lock, set by the transaction
 * about to begin on it (connection.ts: what is left of its busy timeout after its wait in the queue).
 */
export const beginWithin = new WeakMap<object, number>();

/** The pool's stand-in connection for reads routed to the reader (never acquired, never released). */
const READER = Symbol('reader');

const READ_METHODS = new Set(['select', 'first', 'pluck']);
const isReadSql = (sql: string) => /^\s*(select|with\s[\s\S]*\)\s*select)\b/i.test(sql) && !/\b(returning|insert|update|delete|replace)\b/i.test(sql);

interface BuilderLike {
  _method?: string;
  _connection?: unknown;
  sql?: string;
}

class NodeSqliteRunner extends (Runner as unknown as new (
  client: unknown,
  builder: unknown,
) => {
  client: NodeSqliteClient;
  builder: BuilderLike;
  connection: unknown;
  ensureConnection(cb: (runner: unknown, params: unknown) => unknown, params: unknown): Promise<unknown>;
}) {
  override ensureConnection(cb: (runner: unknown, params: unknown) => unknown, params: unknown): Promise<unknown> {
    if (this.client.reads(this.builder)) {
      this.connection = READER;
      return Promise.resolve(cb(this, params));
    }
    return super.ensureConnection(cb, params);
  }
}

class NodeSqliteClient extends (Client_SQLite3 as unknown as new (config: Knex.Config) => {
  config: Knex.Config & { nodeSqlite: NodeSqliteSettings };
  transacting?: boolean;
}) {
  /** The sqlite3 package is not loaded: connections come from `nodeSqlite.open`. */
  _driver(): unknown {
    return {};
  }

  runner(builder: unknown): unknown {
    return new NodeSqliteRunner(this, builder);
  }

  /** Whether this builder's statement is a read to run on the reader (only outside a transaction). */
  reads(builder: BuilderLike): boolean {
    const reader = this.config.nodeSqlite.reader;
    if (!reader || this.transacting || builder._connection) return false;
    if (builder._method !== undefined) return READ_METHODS.has(builder._method);
    return typeof builder.sql === 'string' && isReadSql(builder.sql);
  }

  acquireRawConnection(): Promise<SqliteConnection> {
    return this.config.nodeSqlite.open();
  }

  async destroyRawConnection(conn: SqliteConnection): Promise<void> {
    await conn.close();
  }

  validateConnection(conn: SqliteConnection): boolean {
    return conn.alive;
  }

  async _query(conn: SqliteConnection | typeof READER, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql) throw new Error('The query is empty');
    const within = obj.sql === BEGIN_IMMEDIATE && conn !== READER ? beginWithin.get(conn) : undefined;
    if (within !== undefined) {
      beginWithin.delete(conn as SqliteConnection);
      try {
        await (conn as SqliteConnection).begin(within);
      } catch (err) {
        throw sqliteError(err);
      }
      return obj;
    }
    const params = bindAll(obj.bindings);
    const runs = obj.method === 'insert' || obj.method === 'update' ? !obj.returning : obj.method === 'counter' || obj.method === 'del';
    try {
      if (conn === READER) {
        obj.response = await this.config.nodeSqlite.reader!.all(obj.sql, params);
      } else if (runs) {
        const r = await conn.run(obj.sql, params);
        obj.context = { lastID: r.lastInsertRowid, changes: r.changes };
      } else {
        obj.response = await conn.all(obj.sql, params);
      }
    } catch (err) {
      throw sqliteError(err);
    }
    return obj;
  }
}

Object.assign(NodeSqliteClient.prototype, { driverName: 'node:sqlite' });

/**
 * A knex over node:sqlite. `pool` is knex's (one connection: a single writer; more would only
 * queue on SQLite's lock). `acquireConnectionTimeout` bounds the wait for it.
 */
export function nodeSqliteKnex(settings: NodeSqliteSettings, o: { acquireConnectionTimeout?: number; log?: Knex.Config['log'] } = {}): Knex {
  return (knexFactory as unknown as (c: Knex.Config & { nodeSqlite: NodeSqliteSettings }) => Knex)({
    client: NodeSqliteClient as unknown as typeof Knex.Client,
    connection: { filename: '' },
    useNullAsDefault: true,
    pool: { min: 1, max: 1 },
    acquireConnectionTimeout: o.acquireConnectionTimeout ?? 60000,
    log: o.log,
    nodeSqlite: settings,
  });
}
