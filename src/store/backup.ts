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
import { SQLITE_FILE, sqliteFileKnex, sqliteThreadKnex } from './connection';
import { withDataDirExclusive } from './serve-lock';

export interface SnapshotFacts {
  /** The file checked. */
  file: string;
  bytes: number;
  /** The newest migration the file has applied: its schema version, named as `stats` names it. */
  schemaVersion: string;
  accounts: number;
}

const openFile = (filename: string, busyTimeoutMs: number) => sqliteFileKnex(filename, `PRAGMA busy_timeout = ${busyTimeoutMs};`, busyTimeoutMs);

const storeFile = (config: Config) => path.join(config.dataDir, SQLITE_FILE);

function requireSqlite(config: Config, what: 'backup' | 'restore'): void {
  if (config.db)
    throw new AppError(
      'invalid_input',
      what === 'backup'
        ? 'the store is PostgreSQL: back it up with pg_dump (pg_dump -Fc -f gatehouse.dump <database>)'
        : 'the store is PostgreSQL: restore it with pg_restore into a new database, then point {--db} at it',
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
    const newest =
      MIGRATIONS.map(([name]) => name)
        .filter((name) => applied.includes(name))
        .pop() ?? 'none';
    return { file, bytes: stat.size, schemaVersion: newest, accounts: Number(n) };
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
  if (target === source) throw new AppError('invalid_input', '{--to} names the store itself');
  if (!force && fs.existsSync(target)) throw new AppError('conflict', `${target} exists; give {--force} to replace it`);
  // The snapshot holds password hashes, TOTP secrets and signing keys: it is written inside a
  // fresh directory only this user can enter (0700, made atomically by mkdtemp, on the target's
  // filesystem so the final rename is atomic). A file name in a shared folder could be planted
  // by another local user between our check and SQLite's open, and they would read or own it.
  let scratch: string;
  try {
    scratch = fs.mkdtempSync(path.join(path.dirname(target), `.${path.basename(target)}.partial-`));
  } catch (err) {
    throw new AppError('unavailable', `could not write the backup to ${target} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const partial = path.join(scratch, 'snapshot.sqlite');
  // The snapshot runs in a thread of its own: its wait for the store (busy timeout) and its writes never hold the event loop.
  const k = sqliteThreadKnex(source, '', config.busyTimeout);
  try {
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
    if (err instanceof AppError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'SQLITE_BUSY') throw new AppError('unavailable', `the store is busy; try again (${code})`, { retryAfter: 2 });
    throw new AppError('unavailable', `could not write the backup to ${target} (${code})`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
    await k.destroy();
  }
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
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const target = storeFile(config);
  if (snapshot === target) throw new AppError('invalid_input', '{--from} names the store itself');
  // Held until the new store is in place: no server runs on the store meanwhile, or starts.
  return withDataDirExclusive(config.dataDir, () => replaceStore(config, snapshot, target, facts, now));
}

async function replaceStore(config: Config, snapshot: string, target: string, facts: SnapshotFacts, now: Date): Promise<RestoreReport> {
  // Copy first (under a temporary name), so a failure leaves the current store untouched.
  const incoming = path.join(config.dataDir, `.${SQLITE_FILE}.restoring-${randomBytes(6).toString('hex')}`);
  fs.copyFileSync(snapshot, incoming, fs.constants.COPYFILE_EXCL);
  fs.chmodSync(incoming, 0o600);

  let previous: string | null = null;
  try {
    if (fs.existsSync(target)) {
      // Fold the WAL into the main file, so the kept store is whole on its own.
      const k = sqliteThreadKnex(target, '', config.busyTimeout);
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
