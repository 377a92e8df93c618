/**
 * Reading the permission facts of rows (permission, owner, groups) and the SQL condition that
 * keeps only the rows a principal may read, so paging and totals count readable rows only.
 */
import type { Knex } from 'knex';
import { bit, Operation } from '../permission/bits';
import type { Guarded, Principal } from '../permission/check';
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

/** Adds "principal may `op` this row" to a query over `table` (bound parameters only). */
export function wherePermitted(qb: Knex.QueryBuilder, table: string, principal: Principal, op: Operation): void {
  if (principal.isAdmin) return;
  const groups = [...principal.groupIds];
  qb.where(function () {
    this.whereRaw('(??.?? & ?) <> 0', [table, 'permission', bit('guest', op)]);
    if (principal.accountId === null) return;
    this.orWhere(function () {
      this.where(`${table}.user_account_id`, principal.accountId).whereRaw('(??.?? & ?) <> 0', [table, 'permission', bit('owner', op)]);
    });
    if (groups.length === 0) return;
    this.orWhere(function () {
      this.whereRaw('(??.?? & ?) <> 0', [table, 'permission', bit('group', op)]).andWhere(function () {
        this.whereExists(function () {
          this.select(this.client.raw('1'))
            .from('record_usergroup as rgp')
            .where('rgp.record_type', table)
            .whereRaw('rgp.record_id = ??.??', [table, 'id'])
            .whereIn('rgp.usergroup_id', groups);
        });
        if (table === 'usergroup') this.orWhereIn('usergroup.id', groups);
      });
    });
  });
}
