/** Writes of the record API on allow-listed tables and columns (the record types decide which). */
import { AppError } from '../errors';
import { atomically, op, seal } from './handle';
import { deleteGroupRows } from './nesting';
import { ident, GuardedTable } from './guarded-rows';
import type { ActionRow } from './guarded-rows';
import { decodeRow } from './schema';

/** Sets allow-listed columns of one row. */
export const updateRow = op(async (h, table: GuardedTable, id: number, changes: Readonly<Record<string, unknown>>): Promise<void> => {
  for (const column of Object.keys(changes)) ident(table, column); // refuses undeclared columns
  await h
    .k(table)
    .where({ id })
    .update({ ...changes, updated_at: h.clock.now() });
});

/** Deletes one row and what it was shared with (a group through deleteGroupRows: the groups inside it lose it as an ancestor). */
export const deleteRow = op((root, table: GuardedTable, id: number) =>
  atomically(root, async (h) => {
    if (table === 'usergroup') return deleteGroupRows(seal(h), [id]);
    await h.k('record_usergroup').where({ record_type: table, record_id: id }).del();
    await h.k(table).where({ id }).del();
  }),
);

export const listActions = op(async (h): Promise<ActionRow[]> => {
  const rows: Array<Record<string, unknown>> = await h.k('action').orderBy([{ column: 'on_type' }, { column: 'action_name' }]);
  return rows.map((r) => decodeRow<ActionRow>('action', r));
});

export const setActionPermission = op(async (h, onType: string, name: string, permission: number): Promise<void> => {
  const updated = await h.k('action').where({ on_type: onType, action_name: name }).update({ permission, updated_at: h.clock.now() });
  if (updated !== 1) throw new AppError('not_found', `no action ${onType}/${name}`);
});

export const setActionOwner = op(async (h, onType: string, name: string, ownerId: number): Promise<void> => {
  await h.k('action').where({ on_type: onType, action_name: name }).update({ user_account_id: ownerId, updated_at: h.clock.now() });
});

export const actionOwner = op(async (h, onType: string, name: string): Promise<number | null> => {
  const row = await h.k('action').where({ on_type: onType, action_name: name }).first('user_account_id');
  return row?.user_account_id === null || row?.user_account_id === undefined ? null : Number(row.user_account_id);
});
