/**
 * Rows with the facts permission checks need (their permission, owner and the groups they are
 * shared with), read the same way inside a transaction or on the hot path: the SQL is written
 * once and the handle decides where it runs. can() (permission/check.ts) decides on them.
 */
import { Handle, op, open, Row, Tx } from './handle';
import { decodeRow, SCHEMA, TableName } from './schema';
import type { Guarded } from '../permission/check';
import { jsonRows, parsedRows, type Ride } from './request-facts';

/** An allow-listed identifier, quoted. Anything not in the schema is a programming error. */
export function ident(table: TableName, column?: string): string {
  if (!Object.hasOwn(SCHEMA, table)) throw new Error(`unknown table ${table}`);
  if (column !== undefined && !Object.hasOwn(SCHEMA[table], column)) throw new Error(`unknown column ${table}.${column}`);
  return `"${column ?? table}"`;
}

export type GuardedTable = 'user_account' | 'usergroup' | 'membership' | 'world' | 'action';

export interface GuardedRow<T> {
  row: T;
  guard: Guarded;
}

/** The statement of one row (by unique columns) with the groups it is shared with. */
function guardedRowSql(table: GuardedTable, where: Readonly<Record<string, string>>): { sql: string; params: unknown[] } {
  const columns = Object.keys(where);
  return {
    sql: `SELECT t.*, rg.usergroup_id AS rg_usergroup_id FROM ${ident(table)} t
     LEFT JOIN record_usergroup rg ON rg.record_type = ? AND rg.record_id = t.id
     WHERE ${columns.map((c) => `t.${ident(table, c)} = ?`).join(' AND ')}`,
    params: [table, ...columns.map((c) => where[c])],
  };
}

/** The row and its guard (a group row belongs to itself), from guardedRowSql's rows. */
function guardedFrom<T>(table: GuardedTable, rows: Row[]): GuardedRow<T> | undefined {
  if (rows.length === 0) return undefined;
  const { rg_usergroup_id: _shared, ...raw } = rows[0];
  void _shared;
  const row = decodeRow<T & { id: number; permission: number; user_account_id: number | null }>(table, raw);
  const groupIds: number[] = table === 'usergroup' ? [row.id] : [];
  for (const r of rows) if (r.rg_usergroup_id !== null && r.rg_usergroup_id !== undefined) groupIds.push(Number(r.rg_usergroup_id));
  return { row, guard: { permission: row.permission, ownerId: row.user_account_id, groupIds } };
}

/** One row (by unique columns) with the groups it is shared with (a group row belongs to itself). */
async function readGuardedRow<T>(h: Handle, table: GuardedTable, where: Readonly<Record<string, string>>): Promise<GuardedRow<T> | undefined> {
  const q = guardedRowSql(table, where);
  return guardedFrom<T>(table, await h.all(q.sql, q.params));
}

export function readGuarded<T>(tx: Tx, table: GuardedTable, where: Readonly<Record<string, string>>): Promise<GuardedRow<T> | undefined> {
  return op(readGuardedRow<T>)(tx, table, where);
}

/** readGuarded as a Ride: the row does not depend on who asks, so it can be read with the token's facts. */
export function guardedRide<T>(tx: Tx, table: GuardedTable, where: Readonly<Record<string, string>>): Ride<GuardedRow<T> | undefined> {
  const q = guardedRowSql(table, where);
  return {
    sql: jsonRows(open(tx), q.sql, [...Object.keys(SCHEMA[table]), 'rg_usergroup_id']),
    params: q.params,
    decode: async (json) => guardedFrom<T>(table, parsedRows(json)),
  };
}

/** A record type's table-level row (its world row). */
export const readWorld = op(async (h, table: string) => {
  const world = await readGuardedRow<WorldRow>(h, 'world', { table_name: table });
  if (!world) throw new Error(`record type ${table} has no world row: the store was not migrated`);
  return world;
});

export const readAction = op((h, onType: string, name: string) => readGuardedRow<ActionRow>(h, 'action', { on_type: onType, action_name: name }));

export interface WorldRow {
  id: number;
  reference_id: string;
  table_name: string;
  permission: number;
  default_permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface ActionRow {
  id: number;
  reference_id: string;
  on_type: string;
  action_name: string;
  label: string;
  permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}
