/**
 * Reading the permission facts of rows (permission, owner, groups) inside transactions.
 * (The hot-path versions outside transactions are in hot.ts.)
 */
import type { Guarded } from '../permission/check';
import type { Db } from './connection';

export interface GuardedRow<T> {
  row: T;
  guard: Guarded;
}

/** Rows of `table` matching `where`, each with the groups it belongs to. */
export async function fetchGuarded<T extends { id: number; permission: number; user_account_id: number | null }>(
  db: Db,
  table: string,
  where: Record<string, unknown>,
  normalize: (raw: Record<string, unknown>) => T,
): Promise<Array<GuardedRow<T>>> {
  const raws: Array<Record<string, unknown>> = await db(table)
    .leftJoin('record_usergroup as rg', function () {
      this.on('rg.record_id', '=', `${table}.id`).andOn('rg.record_type', '=', db.raw('?', [table]));
    })
    .where(Object.fromEntries(Object.entries(where).map(([k, v]) => [`${table}.${k}`, v])))
    .select(`${table}.*`, 'rg.usergroup_id as rg_usergroup_id')
    .orderBy(`${table}.id`);
  const byId = new Map<number, GuardedRow<T>>();
  for (const raw of raws) {
    const groupId = raw.rg_usergroup_id as number | null;
    delete raw.rg_usergroup_id;
    let entry = byId.get(raw.id as number);
    if (!entry) {
      const row = normalize(raw);
      // A group row "belongs" to itself: its members share a group with it.
      const own = table === 'usergroup' ? [row.id] : [];
      entry = { row, guard: { permission: row.permission, ownerId: row.user_account_id, groupIds: own } };
      byId.set(row.id, entry);
    }
    if (groupId !== null && groupId !== undefined) (entry.guard.groupIds as number[]).push(groupId);
  }
  return [...byId.values()];
}

export async function fetchOneGuarded<T extends { id: number; permission: number; user_account_id: number | null }>(
  db: Db,
  table: string,
  where: Record<string, unknown>,
  normalize: (raw: Record<string, unknown>) => T,
): Promise<GuardedRow<T> | undefined> {
  return (await fetchGuarded(db, table, where, normalize))[0];
}
