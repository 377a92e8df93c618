/**
 * One group-commit batch on SQLite, straight on the writer connection: BEGIN IMMEDIATE, the
 * batch's writes, COMMIT.
 *
 * Through the query builder BEGIN and COMMIT are three trips to libuv's pool each (prepare, run,
 * finalize), and every trip waits for a turn of the event loop, which under load is busy with
 * other requests (signing, JSON, HTTP). Here each is one trip (exec), and the batch's writes are
 * handed to the driver together, the same write of several requests as one statement where the
 * store function gives its many-rows form (a refresh's two token upserts, say, for every request
 * in the batch).
 */
import type { Knex } from 'knex';
import type sqlite3 from 'sqlite3';
import type { ClaimMany, Handle, Row } from './handle';

const exec = (db: sqlite3.Database, sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));

/** Ends the batch's transaction; some failures (a full disk, I/O errors) have ended it already. */
const rollback = (db: sqlite3.Database) =>
  exec(db, 'ROLLBACK').catch((err: Error) => {
    if (!/no transaction is active/.test(err.message)) throw err;
  });

/**
 * The writer's prepared statements of batched writes, per connection: the batch SQL shapes are a
 * few fixed strings, and a prepared statement is one trip to the pool per use instead of two.
 */
const prepared = new WeakMap<sqlite3.Database, Map<string, sqlite3.Statement>>();
const MAX_PREPARED = 64;

function statementOf(db: sqlite3.Database, sql: string): Promise<sqlite3.Statement> {
  let cache = prepared.get(db);
  if (!cache) prepared.set(db, (cache = new Map()));
  const found = cache.get(sql);
  if (found) return Promise.resolve(found);
  return new Promise((resolve, reject) => {
    const stmt = db.prepare(sql, (err) => {
      if (err) return reject(err);
      if (cache.size >= MAX_PREPARED) {
        const [oldestSql, oldest] = cache.entries().next().value as [string, sqlite3.Statement];
        cache.delete(oldestSql);
        oldest.finalize();
      }
      cache.set(sql, stmt);
      resolve(stmt);
    });
  });
}

const allOf = async (db: sqlite3.Database, sql: string, params: readonly unknown[]) => {
  const stmt = await statementOf(db, sql);
  return new Promise<Row[]>((resolve, reject) => stmt.all(params as unknown[], (err: Error | null, rows: Row[]) => (err ? reject(err) : resolve(rows))));
};

const runOf = async (db: sqlite3.Database, sql: string, params: readonly unknown[]) => {
  const stmt = await statementOf(db, sql);
  return new Promise<void>((resolve, reject) => stmt.run(params as unknown[], (err: Error | null) => (err ? reject(err) : resolve())));
};

interface Queued {
  sql: string;
  params: readonly unknown[];
  /** run's many-rows form. */
  many?: string;
  /** claim's many-rows form (a claim has `claim` set, with or without it). */
  claim?: { many?: ClaimMany };
  done: (err?: unknown, rows?: Row[]) => void;
}

/** Runs `fn` (the batch's writes, through the handle's run and claim) in one transaction on the writer connection. */
export async function sqliteBatch(knex: Knex, base: Pick<Handle, 'dialect' | 'clock'>, fn: (h: Handle) => Promise<void>): Promise<void> {
  const db = (await knex.client.acquireConnection()) as sqlite3.Database;
  // The batch's writes arrive together (its jobs start in one turn); the same write of several
  // jobs becomes one statement over all their parameters, when the store function says how.
  // Writes handed over together run in no set order (Handle.batch says so).
  let queued: Queued[] = [];
  const settle = (group: Queued[], work: Promise<Row[]>, share: (rows: Row[]) => Row[][]) =>
    work.then(
      (rows) => share(rows).forEach((r, i) => group[i].done(undefined, r)),
      (err: unknown) => group.forEach((q) => q.done(err ?? new Error('write failed'))),
    );
  const flush = () => {
    const groups = new Map<string, Queued[]>();
    for (const q of queued) groups.set(q.sql, [...(groups.get(q.sql) ?? []), q]);
    queued = [];
    for (const group of groups.values()) {
      const many = group[0].claim ? group[0].claim.many : undefined;
      if (group.length > 1 && many !== undefined) {
        // One statement claims every row asked for; of the claims of one row, the first gets it.
        settle(group, allOf(db, many.sql, [JSON.stringify(group.map((q) => q.params))]), (rows) => {
          const changed = new Map(rows.map((r) => [many.key(r), r]));
          return group.map((q) => {
            const key = many.keyOf(q.params);
            const row = changed.get(key);
            changed.delete(key);
            return row ? [row] : [];
          });
        });
      } else if (group.length > 1 && group[0].many !== undefined && !group[0].claim) {
        settle(
          group,
          runOf(db, group[0].many, [JSON.stringify(group.map((q) => q.params))]).then(() => []),
          () => group.map(() => []),
        );
      } else for (const q of group) settle([q], q.claim ? allOf(db, q.sql, q.params) : runOf(db, q.sql, q.params).then(() => []), (rows) => [rows]);
    }
  };
  const enqueue = (q: Omit<Queued, 'done'>) =>
    new Promise<Row[]>((resolve, reject) => {
      if (queued.length === 0) queueMicrotask(flush);
      queued.push({ ...q, done: (err, rows) => (err === undefined ? resolve(rows ?? []) : reject(err)) });
    });
  const h: Handle = {
    get k(): Knex {
      // The writer connection is this batch's: a query through the builder would wait for it forever.
      throw new Error('a batched write runs through run() or all()');
    },
    dialect: base.dialect,
    clock: base.clock,
    inTransaction: true,
    all: (sql, params) => new Promise<Row[]>((resolve, reject) => db.all(sql, params as unknown[], (err, rows: Row[]) => (err ? reject(err) : resolve(rows)))),
    run: async (sql, params, many) => void (await enqueue({ sql, params, many })),
    claim: (sql, params, many) => enqueue({ sql, params, claim: { many } }),
    batch: (f) => f(h),
  };
  try {
    await exec(db, 'BEGIN IMMEDIATE');
    try {
      await fn(h);
    } catch (err) {
      await rollback(db);
      throw err;
    }
    try {
      await exec(db, 'COMMIT');
    } catch (err) {
      // A failed COMMIT (SQLITE_BUSY) leaves the transaction open: end it.
      await rollback(db);
      throw err;
    }
  } finally {
    await knex.client.releaseConnection(db);
  }
}

/**
 * A hand-written write alone on the writer connection (its own transaction): a batch of one, and
 * every root `run` and `claim`. One trip with a prepared statement, where the query builder makes
 * several (acquire, prepare, run, finalize).
 */
export function sqliteWriter(knex: Knex): Pick<Handle, 'run' | 'claim'> {
  const alone = async <T>(fn: (db: sqlite3.Database) => Promise<T>): Promise<T> => {
    const db = (await knex.client.acquireConnection()) as sqlite3.Database;
    try {
      return await fn(db);
    } finally {
      await knex.client.releaseConnection(db);
    }
  };
  return {
    run: (sql, params) => alone((db) => runOf(db, sql, params)),
    claim: (sql, params) => alone((db) => allOf(db, sql, params)),
  };
}

/** Finalizes the writer's prepared statements (a connection closes only without any). */
export async function finalizeBatchStatements(knex: Knex): Promise<void> {
  const db = (await knex.client.acquireConnection()) as sqlite3.Database;
  try {
    const cache = prepared.get(db);
    prepared.delete(db);
    await Promise.all([...(cache?.values() ?? [])].map((s) => new Promise<void>((resolve) => s.finalize(() => resolve()))));
  } finally {
    await knex.client.releaseConnection(db);
  }
}
