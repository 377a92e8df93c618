/**
 * One group-commit batch on SQLite, straight on the writer connection: BEGIN IMMEDIATE, the
 * batch's writes, COMMIT.
 *
 * Through the query builder BEGIN and COMMIT are three trips to libuv's pool each (prepare, run,
 * finalize), and every trip waits for a turn of the event loop, which under load is busy with
 * other requests (signing, JSON, HTTP). Here each is one trip (exec), and the batch's writes are
 * handed to the driver together, each its own statement, so they never queue behind one another's
 * turns of the event loop.
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
  const run = (sql: string, params: readonly unknown[]) =>
    new Promise<void>((resolve, reject) => db.run(sql, params as unknown[], (err: Error | null) => (err ? reject(err) : resolve())));
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
