/** Queries on groups: who is in one, which rows are shared with one, and groups by name. */
import { op } from './handle';
import { decodeRow } from './schema';
import type { GuardedTable } from './permissions';

export interface GroupRow {
  id: number;
  reference_id: string;
  name: string;
  system_role: string | null;
  permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface MemberRow {
  id: number;
  reference_id: string;
  email: string;
  name: string;
}

export interface GroupSummary extends GroupRow {
  owner_email: string | null;
  members: number;
}

/** Groups whose name is `name`, ignoring case (names are not unique: every account may have a "team"). */
export const findGroupsByName = op(async (h, name: string): Promise<GroupRow[]> => {
  const rows = await h.all('SELECT * FROM usergroup WHERE lower(name) = ? ORDER BY id', [name.toLowerCase()]);
  return rows.map((r) => decodeRow<GroupRow>('usergroup', r));
});

export const findGroupByReference = op(async (h, referenceId: string): Promise<GroupRow | undefined> => {
  const rows = await h.all('SELECT * FROM usergroup WHERE reference_id = ?', [referenceId]);
  return rows.length === 0 ? undefined : decodeRow<GroupRow>('usergroup', rows[0]);
});

/** Every group with its owner's email and how many members it has, oldest first. */
export const listGroups = op(async (h): Promise<GroupSummary[]> => {
  const rows = await h.all(
    `SELECT g.*, a.email AS owner_email, (SELECT COUNT(*) FROM membership m WHERE m.usergroup_id = g.id) AS members
     FROM usergroup g LEFT JOIN user_account a ON a.id = g.user_account_id ORDER BY g.id`,
    [],
  );
  return rows.map(({ owner_email, members, ...g }) => ({
    ...decodeRow<GroupRow>('usergroup', g),
    owner_email: owner_email === null || owner_email === undefined ? null : String(owner_email),
    members: Number(members),
  }));
});

/** The members of a group, by email. */
export const membersOf = op(async (h, groupId: number): Promise<MemberRow[]> => {
  const rows = await h.all(
    `SELECT a.id, a.reference_id, a.email, a.name FROM membership m JOIN user_account a ON a.id = m.account_id
     WHERE m.usergroup_id = ? ORDER BY a.email_key, a.id`,
    [groupId],
  );
  return rows.map((r) => decodeRow<MemberRow>('user_account', r));
});

export const isMember = op(async (h, accountId: number, groupId: number): Promise<boolean> => {
  return (await h.all('SELECT 1 AS one FROM membership WHERE account_id = ? AND usergroup_id = ?', [accountId, groupId])).length > 0;
});

/** The groups a row is shared with (a group row's membership of itself is implied, not listed). */
export const sharesOf = op(async (h, table: GuardedTable, recordId: number): Promise<Array<Pick<GroupRow, 'id' | 'reference_id' | 'name'>>> => {
  const rows = await h.all(
    `SELECT g.id, g.reference_id, g.name FROM record_usergroup rg JOIN usergroup g ON g.id = rg.usergroup_id
     WHERE rg.record_type = ? AND rg.record_id = ? ORDER BY g.name, g.id`,
    [table, recordId],
  );
  return rows.map((r) => decodeRow<Pick<GroupRow, 'id' | 'reference_id' | 'name'>>('usergroup', r));
});

/** Shares a row with a group; false when it already was. */
export const shareRecord = op(async (h, table: GuardedTable, recordId: number, groupId: number): Promise<boolean> => {
  const inserted = await h
    .k('record_usergroup')
    .insert({ record_type: table, record_id: recordId, usergroup_id: groupId })
    .onConflict(['record_type', 'record_id', 'usergroup_id'])
    .ignore()
    .returning('id');
  return inserted.length > 0;
});

/** Stops sharing a row with a group; false when it was not. */
export const unshareRecord = op(async (h, table: GuardedTable, recordId: number, groupId: number): Promise<boolean> => {
  return (await h.k('record_usergroup').where({ record_type: table, record_id: recordId, usergroup_id: groupId }).del()) > 0;
});
