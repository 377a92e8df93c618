/**
 * The handle every store function takes: the store's root (autocommit) or one transaction.
 * Outside src/store it is the opaque `Tx`; only store code sees the driver behind it.
 *
 * `op()` wraps each store function: it opens the handle and turns driver failures that mean
 * "busy or down" into AppError('unavailable'), so no driver error type leaves the store.
 */
import type { Knex } from 'knex';
import { AppError } from '../errors';
import type { Clock } from '../clock';

export type Row = Record<string, unknown>;
export type Dialect = 'sqlite' | 'postgres';

declare const OPAQUE: unique symbol;
/** A store handle (root or transaction). Opaque: pass it to store functions, nothing else. */
export interface Tx {
  readonly [OPAQUE]: true;
}

export interface Handle {
  readonly k: Knex | Knex.Transaction;
  readonly dialect: Dialect;
  readonly clock: Clock;
  readonly inTransaction: boolean;
  /**
   * Hand-written SQL with ? placeholders over allow-listed identifiers, values always bound. On
   * the root of a SQLite store it runs on the read-only pool (prepared statements); in a
   * transaction, on the transaction's connection.
   */
  all(sql: string, params: readonly unknown[]): Promise<Row[]>;
  /**
   * A hand-written write (? placeholders, values bound). In a group-commit batch on SQLite, the
   * batch's writes of one `sql` are made by one statement when `many` is given: `many` does for a
   * JSON array of such parameter lists (its one parameter) what `sql` does for one
   * (sqlite-batch.ts). Elsewhere it runs through the query builder.
   */
  run(sql: string, params: readonly unknown[], many?: string): Promise<void>;
  /**
   * A hand-written conditional write ending in RETURNING: the rows it changed. "Used once" is
   * decided by their number, never by a read before the write. Always on a writer's connection
   * (in a group-commit batch, the batch's).
   */
  claim(sql: string, params: readonly unknown[], many?: ClaimMany): Promise<Row[]>;
  /**
   * An idempotent write that may share a transaction with others arriving at the same time
   * (group-commit.ts): on the root, batched and resolved once committed; in a transaction, run
   * in it.
   *
   * Order: a batch's writes are handed to the driver together (on SQLite the same statement of
   * several writes becomes one), so writes not awaited one after another run in no set order,
   * even two of one request. Writes that must follow one another are awaited in turn (each
   * resolves only once committed); writes issued together must touch different rows, as a
   * token request's do (a code consumed, new tokens stored: oidc/support.ts). A conditional
   * write whose outcome matters is a `claim`, whose rows say what it changed.
   */
  batch<T>(fn: (h: Handle) => Promise<T>): Promise<T>;
}

/**
 * The many-rows form of a claim, for a group-commit batch on SQLite: `sql` makes the claims of
 * a JSON array of parameter lists (its one parameter) in one statement and returns the rows it
 * changed; `key` names a changed row and `keyOf` the row a claim's parameters ask for. Of the
 * batch's claims of one row, the first gets it and the others get nothing, as if each had run
 * alone in turn.
 */
export interface ClaimMany {
  sql: string;
  key(row: Row): string;
  keyOf(params: readonly unknown[]): string;
}

export const open = (tx: Tx): Handle => tx as unknown as Handle;
export const seal = (h: Handle): Tx => h as unknown as Tx;

/** Rows of a raw statement, whatever the dialect's result shape. */
export async function rawRows(k: Knex | Knex.Transaction, sql: string, params: readonly unknown[]): Promise<Row[]> {
  const result = await k.raw(sql, params as Knex.RawBinding[]);
  return (Array.isArray(result) ? result : result.rows) as Row[];
}

/** A write through the query builder's raw statement. */
export const rawRun =
  (k: Knex | Knex.Transaction) =>
  async (sql: string, params: readonly unknown[]): Promise<void> => {
    await k.raw(sql, params as Knex.RawBinding[]);
  };

/** The handle of a transaction: every statement, batched writes too, on its connection. */
export function transactionHandle(h: Pick<Handle, 'dialect' | 'clock'>, trx: Knex.Transaction): Handle {
  const t: Handle = {
    k: trx,
    dialect: h.dialect,
    clock: h.clock,
    inTransaction: true,
    all: (sql, params) => rawRows(trx, sql, params),
    run: rawRun(trx),
    claim: (sql, params) => rawRows(trx, sql, params),
    batch: (fn) => fn(t),
  };
  return t;
}

/** Runs `fn` atomically: in the caller's transaction, or in a new one on the root. */
export async function atomically<T>(h: Handle, fn: (h: Handle) => Promise<T>): Promise<T> {
  if (h.inTransaction) return fn(h);
  return (h.k as Knex).transaction((trx) => fn(transactionHandle(h, trx)));
}

/**
 * For a use case whose writes must commit together whichever handle it was given: `fn` runs in the
 * caller's transaction, or in a new one on the root.
 */
export async function inOneTransaction<T>(tx: Tx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await atomically(open(tx), (h) => fn(seal(h)));
  } catch (err) {
    throw storeError(err);
  }
}

/** A store function: `fn` gets the open handle; driver failures leave as AppErrors. */
export function op<A extends unknown[], R>(fn: (h: Handle, ...args: A) => Promise<R>): (tx: Tx, ...args: A) => Promise<R> {
  return async (tx, ...args) => {
    try {
      return await fn(open(tx), ...args);
    } catch (err) {
      throw storeError(err);
    }
  };
}

/** Driver and pool failures that mean "busy or down", never a bug in a request. */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string; name?: string } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'KnexTimeoutError') return true;
  // node-postgres's own errors for a connection lost mid-query carry no code.
  if (e.code === undefined && /^Connection terminated/.test((err as Error).message ?? '')) return true;
  return UNAVAILABLE_CODES.has(e.code ?? '');
}

const UNAVAILABLE_CODES = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
  'SQLITE_FULL', // the disk (or the quota) is full
  'SQLITE_READONLY', // the store file (or its folder) cannot be written
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND', // the database host does not resolve
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '3D000', // the database was dropped under a running server (reconnecting fails)
  '28000', // the role was removed, or
  '28P01', // its password changed, under a running server
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '55P03', // lock_not_available
  '57014', // query_canceled (statement_timeout)
]);

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || (e.code === 'SQLITE_CONSTRAINT' && /UNIQUE/.test(e.message ?? ''));
}

/** Failures an operator can act on, said in words (the rest of "unavailable" is busy or down). */
const PLAINLY: Record<string, string> = {
  SQLITE_FULL: "the store's disk is full",
  SQLITE_READONLY: 'the store file cannot be written (check its owner, its mode and its folder)',
};

export function storeError(err: unknown, what = 'the request'): unknown {
  if (err instanceof AppError) return err;
  const plainly = PLAINLY[(err as { code?: string } | null)?.code ?? ''];
  if (plainly) return new AppError('unavailable', `${what} could not finish: ${plainly}`, { retryAfter: 2, cause: err });
  if (isUnavailable(err)) return new AppError('unavailable', `${what} could not finish: the store is busy or unavailable`, { retryAfter: 2, cause: err });
  return err;
}
