/**
 * Who holds a SQLite store: every running server holds a shared lock on `<data-dir>/gatehouse.lock`
 * for its whole life, and `gatehouse restore` takes the exclusive lock for its whole run. The
 * locks are SQLite's own (POSIX advisory locks on a small SQLite file in rollback-journal mode),
 * so the kernel drops them when a process ends, however it ends: no pid file that another process
 * can delete decides whether a store may be replaced under a running server. Several servers on
 * one data directory share it (SQLite's WAL serves several processes); restore waits for none.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { AppError } from '../errors';
import { sqliteFileKnex } from './connection';

export const LOCK_FILE = 'gatehouse.lock';
/** The pid of the latest server to start, for the refusal's message only (the lock decides). */
export const PID_FILE = 'gatehouse.pid';

const lockDb = (dataDir: string, busyTimeoutMs: number) =>
  sqliteFileKnex(path.join(dataDir, LOCK_FILE), `PRAGMA journal_mode = DELETE; PRAGMA busy_timeout = ${busyTimeoutMs};`, busyTimeoutMs);

const busy = (err: unknown) => ['SQLITE_BUSY', 'SQLITE_LOCKED'].includes((err as { code?: string }).code ?? '');

function ownFile(file: string): void {
  const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_RDWR, 0o600);
  fs.closeSync(fd);
}

/** Whether another process holds the data directory now (a server, or a restore): its exclusive lock cannot be had at once. */
export async function othersHoldDataDir(dataDir: string): Promise<boolean> {
  ownFile(path.join(dataDir, LOCK_FILE));
  const k = lockDb(dataDir, 0);
  try {
    await k.raw('BEGIN EXCLUSIVE');
    await k.raw('ROLLBACK');
    return false;
  } catch (err) {
    if (busy(err)) return true;
    throw err;
  } finally {
    await k.destroy();
  }
}

/**
 * A server's hold on its data directory until the returned function runs: a read transaction on
 * the lock file, which blocks restore's exclusive lock. Refused while a restore runs.
 */
export async function holdDataDir(dataDir: string, busyTimeoutMs: number): Promise<() => Promise<void>> {
  ownFile(path.join(dataDir, LOCK_FILE));
  const k = lockDb(dataDir, busyTimeoutMs);
  let trx: Knex.Transaction;
  try {
    trx = await k.transaction();
    await trx.raw('SELECT count(*) AS n FROM sqlite_master');
  } catch (err) {
    await k.destroy();
    if (busy(err)) throw new AppError('conflict', `a restore is replacing the store in ${dataDir}; start the server when it is done`);
    throw err;
  }
  const pidFile = path.join(dataDir, PID_FILE);
  fs.writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  return async () => {
    // The server is stopping: the lock ends with the connection either way.
    await trx.rollback().catch(() => undefined);
    await k.destroy();
    try {
      if (fs.readFileSync(pidFile, 'utf8').trim() === String(process.pid)) fs.unlinkSync(pidFile);
    } catch {
      // already gone
    }
  };
}

/**
 * Runs `work` holding the data directory's exclusive lock: refused at once while any server
 * holds the store (or another restore runs).
 */
export async function withDataDirExclusive<T>(dataDir: string, work: () => Promise<T>): Promise<T> {
  ownFile(path.join(dataDir, LOCK_FILE));
  const k = lockDb(dataDir, 0);
  try {
    try {
      await k.raw('BEGIN EXCLUSIVE');
    } catch (err) {
      if (!busy(err)) throw err;
      let pid = '';
      try {
        pid = ` (pid ${Number(fs.readFileSync(path.join(dataDir, PID_FILE), 'utf8').trim())})`;
      } catch {
        // no pid recorded: the lock alone says a server runs
      }
      throw new AppError('conflict', `a server${pid} is running on ${dataDir}; stop it first`);
    }
    try {
      return await work();
    } finally {
      // Releasing the lock: the work's own outcome is what the caller hears.
      await k.raw('ROLLBACK').catch(() => undefined);
    }
  } finally {
    await k.destroy();
  }
}
