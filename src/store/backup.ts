/**
 * Backups of the SQLite store, and restoring one.
 *
 * A backup is `VACUUM INTO` a new file beside the target: one read transaction, so a consistent
 * snapshot while a server goes on writing (WAL lets it), never a copy of files mid-write. The new
 * file is integrity-checked before it replaces the target (a rename, so the target is never half
 * written). Restoring checks the file the same way and its schema against this build, keeps the
 * store it replaces, and refuses while a server runs on the store (its pid file, below).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import type { Config } from '../config';
import { MIGRATIONS } from './migrations';
import { SQLITE_FILE, sqliteFileKnex } from './connection';

export interface SnapshotFacts {
  /** The file checked. */
  file: string;
  bytes: number;
  /** Migrations the file has applied (its schema version). */
  schemaVersion: number;
  accounts: number;
}

/** Where a running server writes its pid, so that restore can refuse while it runs. */
export const PID_FILE = 'gatehouse.pid';

const openFile = (filename: string, busyTimeoutMs: number) => sqliteFileKnex(filename, `PRAGMA busy_timeout = ${busyTimeoutMs};`, busyTimeoutMs);

const storeFile = (config: Config) => path.join(config.dataDir, SQLITE_FILE);

function requireSqlite(config: Config, what: 'backup' | 'restore'): void {
  if (config.db)
    throw new AppError(
      'invalid_input',
      what === 'backup'
        ? 'the store is PostgreSQL: back it up with pg_dump (pg_dump -Fc -f gatehouse.dump <database>)'
        : 'the store is PostgreSQL: restore it with pg_restore into a new database, then point --db at it',
    );
}

/**
 * Checks a snapshot file: SQLite's integrity check passes, it is a Gatehouse store, and every
 * migration it has applied is one this build knows (a newer release's backup is refused).
 */
export async function inspectSnapshot(file: string): Promise<SnapshotFacts> {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) throw new AppError('not_found', `no file at ${file}`);
  const header = Buffer.alloc(16);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, header, 0, 16, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (header.toString('latin1') !== 'SQLite format 3\0') throw new AppError('invalid_input', `${file} is not a SQLite database`);
  // Read-only checks on a copy-free connection; busy_timeout 0: nothing else should hold it.
  const k = openFile(file, 0);
  try {
    const rows = (await k.raw('PRAGMA integrity_check')) as Array<{ integrity_check: string }>;
    if (rows.length !== 1 || rows[0].integrity_check !== 'ok')
      throw new AppError('invalid_input', `${file} fails SQLite's integrity check: ${rows[0]?.integrity_check ?? 'no answer'}`);
    const hasTables = (await k.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('knex_migrations', 'user_account')")) as unknown[];
    if (hasTables.length !== 2) throw new AppError('invalid_input', `${file} is not a Gatehouse store`);
    const applied = ((await k('knex_migrations').select('name')) as Array<{ name: string }>).map((r) => r.name);
    const known = new Set(MIGRATIONS.map(([name]) => name));
    const unknown = applied.filter((n) => !known.has(n));
    if (unknown.length > 0) throw new AppError('invalid_input', `${file} was written by a newer Gatehouse (schema ${unknown.join(', ')}); upgrade first`);
    const [{ n }] = (await k('user_account').count({ n: '*' })) as Array<{ n: number }>;
    return { file, bytes: stat.size, schemaVersion: applied.length, accounts: Number(n) };
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('invalid_input', `${file} cannot be read as a SQLite database (${(err as { code?: string }).code ?? 'error'})`);
  } finally {
    await k.destroy();
  }
}

/** A consistent, checked snapshot of the store at `to`; an existing `to` only with `force`. */
export async function backupStore(config: Config, to: string, force: boolean): Promise<SnapshotFacts> {
  requireSqlite(config, 'backup');
  const source = storeFile(config);
  if (!fs.existsSync(source)) throw new AppError('not_found', `no store at ${source}`);
  const target = path.resolve(to);
  if (target === source) throw new AppError('invalid_input', '--to names the store itself');
  if (!force && fs.existsSync(target)) throw new AppError('conflict', `${target} exists; give --force to replace it`);
  const partial = path.join(path.dirname(target), `.${path.basename(target)}.partial-${randomBytes(6).toString('hex')}`);
  const k = openFile(source, config.busyTimeoutMs);
  try {
    // The snapshot holds password hashes, TOTP secrets and signing keys: private from its first byte.
    fs.closeSync(fs.openSync(partial, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o600));
    fs.unlinkSync(partial); // VACUUM INTO wants no file there; the name stays ours (random, in the target's folder)
    const umask = process.umask(0o077); // so SQLite creates it 0600 too
    try {
      await k.raw('VACUUM INTO ?', [partial]);
    } finally {
      process.umask(umask);
    }
    fs.chmodSync(partial, 0o600);
    const facts = await inspectSnapshot(partial);
    fs.renameSync(partial, target);
    return { ...facts, file: target };
  } catch (err) {
    fs.rmSync(partial, { force: true });
    if (err instanceof AppError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'SQLITE_BUSY') throw new AppError('unavailable', `the store is busy; try again (${code})`, { retryAfter: 2 });
    throw new AppError('unavailable', `could not write the backup to ${target} (${code})`);
  } finally {
    await k.destroy();
  }
}

/** The pid of a live server on this data directory, or null (a stale pid file is ignored). */
export function runningServer(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dataDir, PID_FILE), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: it exists and belongs to someone else: still a running process.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

/** Marks the data directory as served by this process until the returned function runs. */
export function claimDataDir(config: Config): () => void {
  if (config.db) return () => {};
  const file = path.join(config.dataDir, PID_FILE);
  fs.writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
    } catch {
      // already gone
    }
  };
}

export interface RestoreReport extends SnapshotFacts {
  /** Where the replaced store now is (null when there was none). */
  previous: string | null;
}

/**
 * Replaces the store with the snapshot at `from` after checking it; the replaced store (its
 * WAL checkpointed into it first) is kept beside it as gatehouse.sqlite.before-restore-<time>.
 */
export async function restoreStore(config: Config, from: string, now: Date): Promise<RestoreReport> {
  requireSqlite(config, 'restore');
  const snapshot = path.resolve(from);
  const facts = await inspectSnapshot(snapshot);
  const pid = runningServer(config.dataDir);
  if (pid !== null) throw new AppError('conflict', `a server (pid ${pid}) is running on ${config.dataDir}; stop it first`);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const target = storeFile(config);
  if (snapshot === target) throw new AppError('invalid_input', '--from names the store itself');

  // Copy first (under a temporary name), so a failure leaves the current store untouched.
  const incoming = path.join(config.dataDir, `.${SQLITE_FILE}.restoring-${randomBytes(6).toString('hex')}`);
  fs.copyFileSync(snapshot, incoming, fs.constants.COPYFILE_EXCL);
  fs.chmodSync(incoming, 0o600);

  let previous: string | null = null;
  try {
    if (fs.existsSync(target)) {
      // Fold the WAL into the main file, so the kept store is whole on its own.
      const k = openFile(target, config.busyTimeoutMs);
      try {
        await k.raw('PRAGMA wal_checkpoint(TRUNCATE)');
      } finally {
        await k.destroy();
      }
      previous = `${target}.before-restore-${now.toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(target, previous);
      for (const suffix of ['-wal', '-shm']) fs.rmSync(target + suffix, { force: true });
    }
    fs.renameSync(incoming, target);
  } catch (err) {
    fs.rmSync(incoming, { force: true });
    if (previous && !fs.existsSync(target)) fs.renameSync(previous, target);
    if (err instanceof AppError) throw err;
    throw new AppError('unavailable', `could not restore into ${config.dataDir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return { ...facts, file: snapshot, previous };
}
