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
import type { Handle, Row } from './handle';

const exec = (db: sqlite3.Database, sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));

/** Ends the batch's transaction; some failures (a full disk, I/O errors) have ended it already. */
const rollback = (db: sqlite3.Database) =>
  exec(db, 'ROLLBACK').catch((err: Error) => {
    if (!/no transaction is active/.test(err.message)) throw err;
  });

/** Runs `fn` (the batch's writes, through the handle's run) in one transaction on the writer connection. */
export async function sqliteBatch(knex: Knex, base: Pick<Handle, 'dialect' | 'clock'>, fn: (h: Handle) => Promise<void>): Promise<void> {
  const db = (await knex.client.acquireConnection()) as sqlite3.Database;
  const statement = (sql: string, params: readonly unknown[]) =>
    new Promise<void>((resolve, reject) => db.run(sql, params as unknown[], (err: Error | null) => (err ? reject(err) : resolve())));
  // The batch's writes arrive together (its jobs start in one turn); the same write of several
  // jobs becomes one statement over all their parameters, when the store function says how.
  // Writes handed over together run in no set order (Handle.batch says so; claims run at once).
  let queued: Array<{ sql: string; params: readonly unknown[]; many?: string; done: (err?: unknown) => void }> = [];
  const flush = () => {
    const groups = new Map<string, typeof queued>();
    for (const q of queued) groups.set(q.sql, [...(groups.get(q.sql) ?? []), q]);
    queued = [];
    for (const group of groups.values()) {
      const many = group[0].many;
      if (group.length > 1 && many !== undefined) {
        statement(many, [JSON.stringify(group.map((q) => q.params))]).then(
          () => group.forEach((q) => q.done()),
          (err: unknown) => group.forEach((q) => q.done(err ?? new Error('write failed'))),
        );
      } else
        for (const q of group)
          statement(q.sql, q.params).then(
            () => q.done(),
            (err: unknown) => q.done(err ?? new Error('write failed')),
          );
    }
  };
  const run = (sql: string, params: readonly unknown[], many?: string) =>
    new Promise<void>((resolve, reject) => {
      if (queued.length === 0) queueMicrotask(flush);
      queued.push({ sql, params, many, done: (err) => (err === undefined ? resolve() : reject(err)) });
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
    run,
    claim: (sql, params) =>
      new Promise<Row[]>((resolve, reject) => db.all(sql, params as unknown[], (err, rows: Row[]) => (err ? reject(err) : resolve(rows)))),
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
