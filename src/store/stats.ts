/** Counts and sizes for statistics: figures from the store, none of its secrets or paths. */
import fs from 'node:fs';
import type { Knex } from 'knex';
import { op } from './handle';
import { ACCOUNT_ORIGINS, NO_PASSWORD, type AccountOrigin } from './accounts';
import { internalsOf, SQLITE_FILE, Store } from './connection';

const count = async (q: Knex.QueryBuilder): Promise<number> => Number((await q.count({ n: '*' }).first())?.n ?? 0);

export const accountCounts = op(async (h) => {
  const k = h.k;
  const [total, administrators, withTotp, unverified, disabled, groups, withPasskeys, withoutPassword, origins] = await Promise.all([
    count(k('user_account')),
    count(k('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators')),
    count(k('user_account').where({ totp_enabled: true })),
    count(k('user_account').where({ email_verified: false })),
    count(k('user_account').where({ disabled: true })),
    count(k('usergroup')),
    count(k('user_account').whereIn('id', k('passkey').distinct('account_id'))),
    // Passkey-only accounts: their password column is empty (no hash matches it).
    count(k('user_account').where({ password: NO_PASSWORD })),
    k('user_account').select('origin').count({ n: '*' }).groupBy('origin') as Promise<Array<{ origin: string | null; n: number | string }>>,
  ]);
  // Every origin named, 0 when nobody came from it ('local': made here); a value this version
  // does not know (written by a newer one) is left out rather than shown under a name from the store.
  const byOrigin = Object.fromEntries(['local', ...ACCOUNT_ORIGINS].map((o) => [o, 0])) as Record<'local' | AccountOrigin, number>;
  for (const { origin, n } of origins) {
    if (origin === null) byOrigin.local += Number(n);
    else if ((ACCOUNT_ORIGINS as readonly string[]).includes(origin)) byOrigin[origin as AccountOrigin] += Number(n);
  }
  return { total, administrators, withTotp, unverified, disabled, groups, withPasskeys, withoutPassword, byOrigin };
});

/** The cheapest statement that still reads the store (readiness checks): one row of a small table. */
/**
 * A write that changes nothing: it needs the store's write lock (SQLite: another process holding
 * it makes this wait; PostgreSQL: a read-only standby refuses it, 25006), so it succeeds only
 * where a write could.
 */
export const storeWritable = op(async (h): Promise<void> => {
  await h.k.raw("UPDATE write_lock SET counter = counter WHERE name = 'readiness'");
});

export interface PoolStats {
  used: number;
  free: number;
  pending: number;
}

/** The writer pool's state (the SQLite read pool queues in JS and is not counted here). */
export function poolStats(store: Store): PoolStats | null {
  const pool = internalsOf(store).knex.client.pool as { numUsed(): number; numFree(): number; numPendingAcquires(): number } | undefined;
  return pool ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() } : null;
}

/** Bytes the store takes: the database's size on PostgreSQL, the files (with WAL) on SQLite. */
export async function storeBytes(store: Store, dataDir: string): Promise<number> {
  const { root } = internalsOf(store);
  if (store.dialect === 'postgres') {
    const [row] = await root.all('select pg_database_size(current_database()) as size', []);
    return Number(row.size);
  }
  const base = `${dataDir}/${SQLITE_FILE}`;
  return ['', '-wal', '-shm'].reduce((sum, suffix) => {
    try {
      return sum + fs.statSync(base + suffix).size;
    } catch {
      return sum;
    }
  }, 0);
}

/**
 * Whether `filter=` on accounts and groups has its trigram indexes: always on SQLite (FTS5 is
 * built in); on PostgreSQL only where the pg_trgm extension could be created at migration.
 */
export const filterIndexed = op(async (h): Promise<boolean> => {
  if (h.dialect === 'sqlite') return true;
  const rows = await h.all("SELECT count(*) AS n FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'user_account_email_trgm'", []);
  return Number(rows[0].n) > 0;
});
