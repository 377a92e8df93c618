/**
 * Reads outside a transaction (token checks, record lists and gets, and every other root read)
 * run here: one read-only `node:sqlite` connection on the event loop with cached prepared
 * statements. A statement runs at once on this thread (no hand-off to another thread and back),
 * and WAL gives it the latest committed data without waiting for the writer, so nothing here can
 * serve a revoked token or an old permission, and a transaction holding the write lock (ours, in
 * the writer's thread, or a shell command's) never delays a read.
 *
 * The connection never waits on the event loop: its busy timeout is 0. The rare moments a WAL
 * reader is told "busy" (another connection recovering the log after a crash, or resetting it)
 * are waited out off the loop, by trying again after a pause, up to the store's busy timeout.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { AppError } from '../errors';
import { bindAll, blobsAsBuffers, exactNumber, sqliteError } from './sqlite-driver';
import type { Row } from './handle';

/** Prepared statements kept (the SQL shapes are few: allow-listed columns). */
const MAX_STATEMENTS = 200;

export class ReadPool {
  private readonly statements = new Map<string, StatementSync>();

  private constructor(
    private readonly db: DatabaseSync,
    private readonly busyTimeoutMs: number,
  ) {}

  static open(filename: string, busyTimeoutMs: number): ReadPool {
    try {
      const db = new DatabaseSync(filename, { readOnly: true, timeout: 0 });
      return new ReadPool(db, busyTimeoutMs);
    } catch (err) {
      throw sqliteError(err);
    }
  }

  /** Runs `sql` (with ? placeholders); rows with a null prototype (sqlite-driver.ts). */
  all(sql: string, params: readonly unknown[]): Promise<Row[]> {
    if (!this.db.isOpen) return Promise.reject(new AppError('unavailable', 'the store is closed', { retryAfter: 2 }));
    try {
      return Promise.resolve(this.now(sql, params));
    } catch (err) {
      const e = sqliteError(err) as { code?: string };
      if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED') return this.later(sql, params, Date.now() + this.busyTimeoutMs, 1);
      return Promise.reject(e);
    }
  }

  private now(sql: string, params: readonly unknown[]): Row[] {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      if (this.statements.size >= MAX_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    const bound = bindAll(params);
    let rows: Array<Record<string, unknown>>;
    try {
      rows = stmt.all(...bound) as Array<Record<string, unknown>>;
    } catch (err) {
      // An integer past 2^53 is refused as a number: read again (a read, so safe to repeat) with BigInts.
      if ((err as { code?: string }).code !== 'ERR_OUT_OF_RANGE') throw err;
      stmt.setReadBigInts(true);
      try {
        rows = stmt.all(...bound) as Array<Record<string, unknown>>;
      } finally {
        stmt.setReadBigInts(false);
      }
      for (const row of rows) for (const k in row) row[k] = exactNumber(row[k]);
    }
    for (const row of rows) blobsAsBuffers(row);
    return rows;
  }

  private async later(sql: string, params: readonly unknown[], until: number, attempt: number): Promise<Row[]> {
    for (;;) {
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50)));
      try {
        return this.now(sql, params);
      } catch (err) {
        const e = sqliteError(err) as { code?: string };
        if ((e.code !== 'SQLITE_BUSY' && e.code !== 'SQLITE_LOCKED') || Date.now() >= until) throw e;
        attempt++;
      }
    }
  }

  close(): Promise<void> {
    this.statements.clear();
    if (this.db.isOpen) this.db.close();
    return Promise.resolve();
  }
}
