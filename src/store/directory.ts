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
export const readPeople = op(async (h, only?: { username?: string; email?: string; referenceId?: string; group?: string }): Promise<PersonRow[]> => {
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
  if (only?.group !== undefined) {
    // From the group (by its name's index) to its members, not from every account to its groups.
    where.push(
      `a.id IN (SELECT gm.account_id FROM usergroup gg JOIN membership gm ON gm.usergroup_id = gg.id WHERE lower(gg.name) = ? AND ${managedGroupSql('gg')})`,
    );
    params.push(only.group.toLowerCase());
  }
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

/** What a group read narrows to: a name, groups one enabled person (by username) is in, and whether member lists are read. */
export interface GroupQuery {
  name?: string;
  member?: string;
  /** false: each group's members are left out (only `member`, when given, is listed). */
  members?: boolean;
}

/** Managed groups with their enabled members' usernames, optionally narrowed (one indexed read each way). */
export const readGroups = op(async (h, q: GroupQuery = {}): Promise<GroupEntryRow[]> => {
  const where = [managedGroupSql('g')];
  const params: unknown[] = [];
  if (q.name !== undefined) {
    where.push('lower(g.name) = ?');
    params.push(q.name.toLowerCase());
  }
  if (q.member !== undefined) {
    // From the person (by username) to their groups, not from every group through its members.
    where.push(
      `g.id IN (SELECT mm.usergroup_id FROM user_account ma JOIN membership mm ON mm.account_id = ma.id WHERE ma.username = ? AND ${enabled(h, 'ma')})`,
    );
    params.push(q.member);
  }
  const groups = await h.all(`SELECT g.id, g.reference_id, g.name FROM usergroup g WHERE ${where.join(' AND ')} ORDER BY g.name`, params);
  if (groups.length === 0) return [];
  if (q.members === false) {
    return groups.map((g) => ({ reference_id: String(g.reference_id), name: String(g.name), members: q.member === undefined ? [] : [q.member] }));
  }
  const members = await h.all(
    `SELECT m.usergroup_id, a.username FROM membership m JOIN user_account a ON a.id = m.account_id
     WHERE ${enabled(h, 'a')} AND m.usergroup_id IN (${groups.map(() => '?').join(', ')}) ORDER BY a.username`,
    groups.map((g) => g.id),
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
