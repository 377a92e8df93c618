/** Queries on groups: who is in one, which rows are shared with one, and groups by name. */
import { op, seal } from './handle';
import { decodeRow } from './schema';
import type { GuardedTable } from './guarded-rows';
import { inGroupSql, memberGroupsSql, removeNestings } from './nesting';

export interface GroupRow {
  id: number;
  reference_id: string;
  name: string;
  system_role: string | null;
  permission: number;
  user_account_id: number | null;
  /** The id a provisioning service (SCIM) gave the group; null otherwise. */
  external_id: string | null;
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
  /** Accounts directly in it. */
  members: number;
  /** Accounts in it directly or through the groups inside it, at any depth, each once. */
  all_members: number;
}

/** How many accounts group `groupSql` (a column or `?`, bound twice) holds directly or through the groups inside it, each once: an SQL subquery. */
const allMembersSql = (groupSql: string) =>
  `(SELECT COUNT(DISTINCT am.account_id) FROM membership am WHERE am.usergroup_id = ${groupSql}
     OR am.usergroup_id IN (SELECT ac.descendant_id FROM usergroup_closure ac WHERE ac.ancestor_id = ${groupSql}))`;

/** Groups whose name is `name`, ignoring case (names are not unique: every account may have a "team"). */
export const findGroupsByName = op(async (h, name: string): Promise<GroupRow[]> => {
  const rows = await h.all('SELECT * FROM usergroup WHERE lower(name) = ? ORDER BY id', [name.toLowerCase()]);
  return rows.map((r) => decodeRow<GroupRow>('usergroup', r));
});

/** The managed groups (see managedGroupSql) whose name is `name`, ignoring case, oldest first. */
export const findManagedGroupsByName = op(async (h, name: string): Promise<GroupRow[]> => {
  const rows = await h.all(`SELECT * FROM usergroup g WHERE lower(g.name) = ? AND ${managedGroupSql('g')} ORDER BY g.id`, [name.toLowerCase()]);
  return rows.map((r) => decodeRow<GroupRow>('usergroup', r));
});

export const findGroupByReference = op(async (h, referenceId: string): Promise<GroupRow | undefined> => {
  const rows = await h.all('SELECT * FROM usergroup WHERE reference_id = ?', [referenceId]);
  return rows.length === 0 ? undefined : decodeRow<GroupRow>('usergroup', rows[0]);
});

export const findGroupById = op(async (h, id: number): Promise<GroupRow | undefined> => {
  const rows = await h.all('SELECT * FROM usergroup WHERE id = ?', [id]);
  return rows.length === 0 ? undefined : decodeRow<GroupRow>('usergroup', rows[0]);
});

/**
 * Every group with its owner's email and member counts (direct, and with the groups inside it),
 * oldest first; `managedOnly`: the managed ones (see managedGroupSql).
 */
export const listGroups = op(async (h, managedOnly = false): Promise<GroupSummary[]> => {
  const rows = await h.all(
    `SELECT g.*, a.email AS owner_email, (SELECT COUNT(*) FROM membership m WHERE m.usergroup_id = g.id) AS members, ${allMembersSql('g.id')} AS all_members
     FROM usergroup g LEFT JOIN user_account a ON a.id = g.user_account_id ${managedOnly ? `WHERE ${managedGroupSql('g')}` : ''} ORDER BY g.id`,
    [],
  );
  return rows.map(({ owner_email, members, all_members, ...g }) => ({
    ...decodeRow<GroupRow>('usergroup', g),
    owner_email: owner_email === null || owner_email === undefined ? null : String(owner_email),
    members: Number(members),
    all_members: Number(all_members),
  }));
});

/** How many accounts a group holds directly or through the groups inside it, each once. */
export const countAllMembers = op(async (h, groupId: number): Promise<number> => {
  const rows = await h.all(`SELECT ${allMembersSql('?')} AS n`, [groupId, groupId]);
  return Number(rows[0].n);
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

/**
 * A managed group: one no ordinary account controls. Its owner is nobody (made from the shell)
 * or an administrator, and it is nobody's dedicated group. Only managed groups count where a
 * group decides access or roles (client gates, the `groups` claim, forward-auth rules): any
 * signed-in account can make a group and name it anything, so a name alone proves nothing.
 * `g` is the usergroup row's alias in the statement.
 */
export const managedGroupSql = (g: string) =>
  // A dedicated group is its owner's first; "an older group of the same owner exists" is read
  // through the owner's index (d.id < g.id). The role's test is written so that no planner takes
  // the unique index on system_role for it: its NULLs are every ordinary group, and SQLite,
  // counting on uniqueness, read all of them once per row (seconds a page of a directory search).
  `(${g}.system_role IS NOT NULL OR ${g}.user_account_id IS NULL OR (
     ${g}.user_account_id IN (
        SELECT am.account_id FROM membership am JOIN usergroup ag ON ag.id = am.usergroup_id WHERE ag.system_role = 'administrators')
     AND EXISTS (SELECT 1 FROM usergroup d WHERE d.user_account_id = ${g}.user_account_id AND d.id < ${g}.id AND COALESCE(d.system_role, '') = '')))`;

/**
 * Takes the groups an account owns out of every managed group they are inside (its dedicated
 * group can be in none): once it stops administering, its groups stop being managed, and a managed
 * group holds only managed groups (their owner could otherwise put anyone in it). Returns the
 * (parent, child) pairs taken apart.
 */
export const unnestOwnedFromManaged = op(async (h, accountId: number): Promise<Array<{ parent_id: number; child_id: number }>> => {
  const edges = (
    await h.all(
      `SELECT n.parent_id, n.child_id FROM usergroup_nesting n JOIN usergroup c ON c.id = n.child_id JOIN usergroup g ON g.id = n.parent_id
       WHERE c.user_account_id = ? AND c.system_role IS NULL AND ${managedGroupSql('g')}`,
      [accountId],
    )
  ).map((r) => ({ parent_id: Number(r.parent_id), child_id: Number(r.child_id) }));
  if (edges.length > 0) await removeNestings(seal(h), edges);
  return edges;
});

/** Whether group `groupId` is managed (see managedGroupSql). */
export const isManagedGroup = op(async (h, groupId: number): Promise<boolean> => {
  return (await h.all(`SELECT 1 AS one FROM usergroup g WHERE g.id = ? AND ${managedGroupSql('g')}`, [groupId])).length > 0;
});

/** Every managed group (see managedGroupSql). */
export const managedGroups = op(async (h): Promise<GroupRow[]> => {
  const rows = await h.all(`SELECT * FROM usergroup g WHERE ${managedGroupSql('g')} ORDER BY g.id`, []);
  return rows.map((r) => decodeRow<GroupRow>('usergroup', r));
});

/** Whether the account (reference_id) is a member, directly or through nesting, of any of these managed groups (reference_ids). */
export const memberOfManaged = op(async (h, accountReference: string, groupReferences: readonly string[]): Promise<boolean> => {
  if (groupReferences.length === 0) return false;
  const rows = await h.all(
    `SELECT 1 AS one FROM user_account a JOIN usergroup g ON g.reference_id IN (${groupReferences.map(() => '?').join(', ')})
     WHERE a.reference_id = ? AND ${inGroupSql('a.id', 'g.id')} AND ${managedGroupSql('g')}`,
    [...groupReferences, accountReference],
  );
  return rows.length > 0;
});

/**
 * Whether the account administers, or is a member of a managed group named (in any case) one of
 * `names`: who may search the LDAP directory. One statement, on every bind.
 */
/** The reader test of isReader as SQL on `accountSql`, with its parameters (a reader group's members through nesting count). */
function readerSql(accountSql: string, names: readonly string[]): { sql: string; params: string[] } {
  // As given, or lowered (SQLite's lower() folds ASCII letters only: a name as typed still matches).
  const list = names.map(() => '?').join(', ');
  const administers = `EXISTS (SELECT 1 FROM membership m JOIN usergroup g ON g.id = m.usergroup_id
            WHERE m.account_id = ${accountSql} AND g.system_role = 'administrators')`;
  if (names.length === 0) return { sql: administers, params: [] };
  return {
    sql: `(${administers} OR EXISTS (SELECT 1 FROM (${memberGroupsSql(accountSql)}) r JOIN usergroup g ON g.id = r.usergroup_id
            WHERE (g.name IN (${list}) OR lower(g.name) IN (${list})) AND ${managedGroupSql('g')}))`,
    params: [...names, ...names.map((n) => n.toLowerCase())],
  };
}

export const isReader = op(async (h, accountId: number, names: readonly string[]): Promise<boolean> => {
  const reader = readerSql('a.id', names);
  const rows = await h.all(`SELECT 1 AS one FROM user_account a WHERE ${reader.sql} AND a.id = ?`, [...reader.params, accountId]);
  return rows.length > 0;
});

/**
 * Whether a directory bind still holds, in one read: the account is there,
 * enabled, at the auth_version it bound with (a new password, sign-out everywhere and disabling
 * all move it), and the app password it bound with is not revoked. With it, whether it may
 * still search (a reader group left or joined shows at once).
 */
export const bindHolds = op(
  async (
    h,
    bound: { accountId: number; authVersion: number; appPasswordId: number | null },
    names: readonly string[],
  ): Promise<{ holds: boolean; reader: boolean }> => {
    const reader = readerSql('a.id', names);
    const appPassword = bound.appPasswordId === null ? '' : ' AND EXISTS (SELECT 1 FROM app_password p WHERE p.id = ? AND p.account_id = a.id)';
    const rows = await h.all(
      `SELECT CASE WHEN ${reader.sql} THEN 1 ELSE 0 END AS reader FROM user_account a
       WHERE a.id = ? AND a.auth_version = ? AND a.disabled = ?${appPassword}`,
      [...reader.params, bound.accountId, bound.authVersion, false, ...(bound.appPasswordId === null ? [] : [bound.appPasswordId])],
    );
    return rows.length === 0 ? { holds: false, reader: false } : { holds: true, reader: Number(rows[0].reader) === 1 };
  },
);

/** Groups by reference_id (missing ones are left out). */
export const findGroupsByReference = op(async (h, referenceIds: readonly string[]): Promise<GroupRow[]> => {
  if (referenceIds.length === 0) return [];
  const rows = await h.all(`SELECT * FROM usergroup WHERE reference_id IN (${referenceIds.map(() => '?').join(', ')}) ORDER BY id`, [...referenceIds]);
  return rows.map((r) => decodeRow<GroupRow>('usergroup', r));
});
