/**
 * Is this a Gatehouse store, and one this executable may write? Asked before any migration runs:
 * a file that is not SQLite, a database that belongs to something else, and a store written by a
 * newer Gatehouse are refused (`bad_store`) with nothing changed: no pragma, no migration, no
 * chmod. An empty file or database is a new store.
 */
import fs from 'node:fs';
import type { Knex } from 'knex';
import { AppError } from '../errors';
import { MIGRATIONS, LATEST_MIGRATION } from './migrations';
import type { Dialect } from './handle';

const KNOWN = new Set(MIGRATIONS.map(([name]) => name));
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** knex's own bookkeeping, present in every Gatehouse store. */
const KNEX_TABLES = new Set(['knex_migrations', 'knex_migrations_lock']);

export interface Identity {
  /** Tables that are not knex's bookkeeping. */
  tables: string[];
  /** Migrations the store records as applied, in order (null: no knex_migrations table). */
  applied: string[] | null;
}

export interface MigrationReport {
  /** The last migration applied (the store's schema version), or null for an empty store. */
  current: string | null;
  /** This executable's schema version: the last migration it knows. */
  latest: string;
  applied: string[];
  pending: string[];
  /** Applied in the store, unknown to this executable: written by a newer (or another) Gatehouse. */
  unknown: string[];
}

/** A file's first 16 bytes, or null when it is missing or empty (a new store). */
function header(file: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AppError('unavailable', `the store file ${file} is not usable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const buf = Buffer.alloc(16);
    const n = fs.readSync(fd, buf, 0, 16, 0);
    return n === 0 ? null : buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

const notSqlite = (file: string): AppError =>
  new AppError(
    'bad_store',
    `${file} is not a SQLite database, so not a Gatehouse store (another kind of file, or a damaged one): nothing was changed. Restore the store from a backup, or point {--data-dir} at a Gatehouse store's folder`,
  );

/** True when a SQLite file exists with content; refuses one that is not SQLite at all. */
export function sqliteFileHasContent(file: string): boolean {
  const head = header(file);
  if (head === null) return false;
  if (!head.equals(SQLITE_HEADER)) throw notSqlite(file);
  return true;
}

/** The driver's words for "this is not a database" (encrypted, truncated, damaged). */
export function isNotADatabase(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}
export const damagedSqlite = notSqlite;

export async function identify(knex: Knex, dialect: Dialect): Promise<Identity> {
  const names: string[] =
    dialect === 'sqlite'
      ? (await knex.raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'`)).map((r: { name: string }) => r.name)
      : (await knex.raw(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`)).rows.map(
          (r: { name: string }) => r.name,
        );
  const applied = names.includes('knex_migrations')
    ? (await knex('knex_migrations').orderBy('id', 'asc').select('name')).map((r: { name: string }) => r.name)
    : null;
  return { tables: names.filter((n) => !KNEX_TABLES.has(n)).sort(), applied };
}

export function report(identity: Identity): MigrationReport {
  const applied = identity.applied ?? [];
  const done = new Set(applied);
  return {
    current: applied.length > 0 ? applied[applied.length - 1] : null,
    latest: LATEST_MIGRATION,
    applied,
    pending: MIGRATIONS.map(([name]) => name).filter((n) => !done.has(n)),
    unknown: applied.filter((n) => !KNOWN.has(n)),
  };
}

const listed = (names: string[], max = 5): string => names.slice(0, max).join(', ') + (names.length > max ? ` and ${names.length - max} more` : '');

/**
 * Refuses what this executable must not migrate: tables and no Gatehouse migrations (something
 * else's database), or migrations it does not know (a newer Gatehouse). `newer: 'report'` lets a
 * newer store through for `migrate status`, which only reads.
 */
export function refuseStranger(location: string, identity: Identity, o: { newer: 'refuse' | 'report' } = { newer: 'refuse' }): void {
  const ours = (identity.applied ?? []).filter((n) => KNOWN.has(n));
  if (identity.tables.length > 0 && ours.length === 0) {
    throw new AppError(
      'bad_store',
      `${location} is not a Gatehouse store: it holds tables of its own (${listed(identity.tables)}) and no Gatehouse migrations, and Gatehouse never writes into it. Point {--data-dir} (or {--db}) at a Gatehouse store, or at an empty folder (an empty database) for a new one`,
    );
  }
  const r = report(identity);
  if (r.unknown.length === 0 || o.newer === 'report') return;
  const newer = r.unknown.every((n) => n > LATEST_MIGRATION);
  throw new AppError(
    'bad_store',
    newer
      ? `the store at ${location} was written by a newer Gatehouse: its schema is ${r.current} and this executable's is ${LATEST_MIGRATION}. Nothing was changed. Run the Gatehouse that wrote it (or a later one: gatehouse version names an executable's schema), or restore the backup taken before that upgrade to go back to this one`
      : `the store at ${location} records migrations this executable does not know (${listed(r.unknown)}; its schema is ${r.current}, this executable's is ${LATEST_MIGRATION}). Nothing was changed. Run the Gatehouse that wrote it, or restore a backup made by this one`,
  );
}
