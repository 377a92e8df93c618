/**
 * One group-commit batch on SQLite, straight on the writer connection (its thread:
 * sqlite-writer.ts): BEGIN IMMEDIATE, the batch's writes, COMMIT.
 *
 * Through the query builder every statement is a message to the writer's thread and back, and
 * every answer waits for a turn of the event loop, which under load is busy with other requests
 * (signing, JSON, HTTP). Here BEGIN and COMMIT are one message each, and the writes handed over
 * together are one message (`many`), the same write of several requests as one statement where
 * the store function gives its many-rows form (a refresh's two token upserts, say, for every
 * request in the batch). The thread keeps the statements prepared.
 */
import type { Knex } from 'knex';
import type { ClaimMany, Handle, Row } from './handle';
import { bindAll, type SqliteConnection } from './sqlite-driver';

/** Ends the batch's transaction; some failures (a full disk, I/O errors) have ended it already. */
const rollback = (db: SqliteConnection) =>
  db.exec('ROLLBACK').catch((err: Error) => {
    if (!/no transaction is active/.test(err.message)) throw err;
  });

interface Queued {
  sql: string;
  params: readonly unknown[];
  /** run's many-rows form. */
  many?: string;
  /** claim's many-rows form (a claim has `claim` set, with or without it). */
  claim?: { many?: ClaimMany };
  done: (err?: unknown, rows?: Row[]) => void;
}

/**
 * Runs `fn` (the batch's writes, through the handle's run and claim) in one transaction on the
 * writer connection, waiting at most `waitMs` for the write lock (default: the busy timeout).
 */
export async function sqliteBatch(knex: Knex, base: Pick<Handle, 'dialect' | 'clock'>, fn: (h: Handle) => Promise<void>, waitMs?: number): Promise<void> {
  const db = (await knex.client.acquireConnection()) as SqliteConnection;
  // The batch's writes arrive together (its jobs start in one turn); the same write of several
  // jobs becomes one statement over all their parameters, when the store function says how.
  // Writes handed over together run in no set order (Handle.batch says so).
  let queued: Queued[] = [];
  /** One statement sent, and how its rows (or its error) answer the writes it made. */
  interface Sent {
    sql: string;
    params: readonly unknown[];
    rows: boolean;
    answer: (rows: Row[]) => void;
    fail: (err: unknown) => void;
  }
  const flush = () => {
    const groups = new Map<string, Queued[]>();
    for (const q of queued) groups.set(q.sql, [...(groups.get(q.sql) ?? []), q]);
    queued = [];
    const sent: Sent[] = [];
    const failAll = (group: Queued[]) => (err: unknown) => group.forEach((q) => q.done(err ?? new Error('write failed')));
    for (const group of groups.values()) {
      const many = group[0].claim ? group[0].claim.many : undefined;
      if (group.length > 1 && many !== undefined) {
        // One statement claims every row asked for; of the claims of one row, the first gets it.
        sent.push({
          sql: many.sql,
          params: [JSON.stringify(group.map((q) => q.params))],
          rows: true,
          answer: (rows) => {
            const changed = new Map(rows.map((r) => [many.key(r), r]));
            for (const q of group) {
              const key = many.keyOf(q.params);
              const row = changed.get(key);
              changed.delete(key);
              q.done(undefined, row ? [row] : []);
            }
          },
          fail: failAll(group),
        });
      } else if (group.length > 1 && group[0].many !== undefined && !group[0].claim) {
        sent.push({
          sql: group[0].many,
          params: [JSON.stringify(group.map((q) => q.params))],
          rows: false,
          answer: () => group.forEach((q) => q.done(undefined, [])),
          fail: failAll(group),
        });
      } else {
        for (const q of group) sent.push({ sql: q.sql, params: q.params, rows: !!q.claim, answer: (rows) => q.done(undefined, rows), fail: failAll([q]) });
      }
    }
    // One message: the writer's thread runs them one after another, each with its own answer.
    db.many(sent.map((x) => ({ sql: x.sql, params: bindAll(x.params), rows: x.rows }))).then(
      (answers) => answers.forEach((a, i) => ('error' in a ? sent[i].fail(a.error) : sent[i].answer(a.rows))),
      (err: unknown) => sent.forEach((x) => x.fail(err)),
    );
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
    all: (sql, params) => db.all(sql, bindAll(params)),
    run: async (sql, params, many) => void (await enqueue({ sql, params, many })),
    claim: (sql, params, many) => enqueue({ sql, params, claim: { many } }),
    batch: (f) => f(h),
  };
  try {
    await (waitMs === undefined ? db.exec('BEGIN IMMEDIATE') : db.begin(waitMs));
    try {
      await fn(h);
    } catch (err) {
      await rollback(db);
      throw err;
    }
    try {
      await db.exec('COMMIT');
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
 * every root `run` and `claim`. One message to the writer's thread, which keeps it prepared.
 */
export function sqliteWriter(knex: Knex): Pick<Handle, 'run' | 'claim'> {
  const alone = async <T>(fn: (db: SqliteConnection) => Promise<T>): Promise<T> => {
    const db = (await knex.client.acquireConnection()) as SqliteConnection;
    try {
      return await fn(db);
    } finally {
      await knex.client.releaseConnection(db);
    }
  };
  return {
    run: (sql, params) => alone(async (db) => void (await db.run(sql, bindAll(params)))),
    claim: (sql, params) => alone((db) => db.all(sql, bindAll(params))),
  };
}
