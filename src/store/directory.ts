/**
 * What the LDAP directory reads (contract section 15): enabled accounts with their managed groups,
 * and managed groups with their enabled members. Disabled accounts and unmanaged groups never
 * appear. Each read is one statement on the read pool.
 */
import { op } from './handle';
import { managedGroupSql } from './groups';

export interface PersonRow {
  reference_id: string;
  username: string;
  name: string;
  email: string;
  created_at: number;
  /** Names of the managed groups it is in. */
  groups: string[];
}

export interface GroupEntryRow {
  reference_id: string;
  name: string;
  /** Usernames of its enabled members. */
  members: string[];
}

const enabled = (h: { dialect: string }, a: string) => (h.dialect === 'postgres' ? `${a}.disabled = false` : `${a}.disabled = 0`);

/** Enabled accounts, by username, optionally only those named (one indexed read each way). */
export const readPeople = op(async (h, only?: { username?: string; email?: string; referenceId?: string }): Promise<PersonRow[]> => {
  const where = [enabled(h, 'a')];
  const params: unknown[] = [];
  const narrow = (column: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(`a.${column} = ?`);
    params.push(value);
  };
  narrow('username', only?.username);
  narrow('email_key', only?.email);
  narrow('reference_id', only?.referenceId);
  const people = await h.all(
    `SELECT a.id, a.reference_id, a.username, a.name, a.email, a.created_at FROM user_account a WHERE ${where.join(' AND ')} ORDER BY a.username`,
    params,
  );
  if (people.length === 0) return [];
  const memberships = await h.all(
    `SELECT m.account_id, g.name FROM membership m JOIN usergroup g ON g.id = m.usergroup_id JOIN user_account a ON a.id = m.account_id
     WHERE ${where.join(' AND ')} AND ${managedGroupSql('g')} ORDER BY g.name`,
    params,
  );
  const byAccount = new Map<number, string[]>();
  for (const m of memberships) {
    const id = Number(m.account_id);
    const list = byAccount.get(id) ?? [];
    list.push(String(m.name));
    byAccount.set(id, list);
  }
  return people.map((p) => ({
    reference_id: String(p.reference_id),
    username: String(p.username),
    name: String(p.name),
    email: String(p.email),
    created_at: Number(p.created_at),
    groups: byAccount.get(Number(p.id)) ?? [],
  }));
});

/** Managed groups with their enabled members' usernames, optionally one group by name. */
export const readGroups = op(async (h, name?: string): Promise<GroupEntryRow[]> => {
  const byName = name === undefined ? '' : ' AND lower(g.name) = ?';
  const params = name === undefined ? [] : [name.toLowerCase()];
  const groups = await h.all(`SELECT g.id, g.reference_id, g.name FROM usergroup g WHERE ${managedGroupSql('g')}${byName} ORDER BY g.name`, params);
  if (groups.length === 0) return [];
  const members = await h.all(
    `SELECT m.usergroup_id, a.username FROM membership m JOIN user_account a ON a.id = m.account_id JOIN usergroup g ON g.id = m.usergroup_id
     WHERE ${enabled(h, 'a')} AND ${managedGroupSql('g')}${byName} ORDER BY a.username`,
    params,
  );
  const byGroup = new Map<number, string[]>();
  for (const m of members) {
    const id = Number(m.usergroup_id);
    const list = byGroup.get(id) ?? [];
    list.push(String(m.username));
    byGroup.set(id, list);
  }
  return groups.map((g) => ({ reference_id: String(g.reference_id), name: String(g.name), members: byGroup.get(Number(g.id)) ?? [] }));
});
