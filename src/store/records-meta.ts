/** Action rows and world (record type) rows, with their permission facts. */
import type { Db } from './connection';
import { fetchOneGuarded, GuardedRow } from './guards';
import { ActionRow, normalizeRow } from './rows';

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

export function loadAction(db: Db, onType: string, name: string): Promise<GuardedRow<ActionRow> | undefined> {
  return fetchOneGuarded(db, 'action', { on_type: onType, action_name: name }, (r) => normalizeRow<ActionRow>(r));
}

export async function loadWorld(db: Db, table: string): Promise<GuardedRow<WorldRow>> {
  const world = await fetchOneGuarded(db, 'world', { table_name: table }, (r) => normalizeRow<WorldRow>(r));
  if (!world) throw new Error(`record type ${table} has no world row: the store was not migrated`);
  return world;
}

export async function setActionPermission(db: Db, onType: string, name: string, permission: number): Promise<void> {
  await db('action').where({ on_type: onType, action_name: name }).update({ permission, updated_at: Date.now() });
}

export async function listActions(db: Db): Promise<ActionRow[]> {
  const rows = await db('action').orderBy([{ column: 'on_type' }, { column: 'action_name' }]);
  return rows.map((r: Record<string, unknown>) => normalizeRow<ActionRow>(r));
}
