/**
 * What the LDAP directory reads (contract sections 15 and 22): enabled accounts with their managed
 * groups (directly or through nesting), and managed groups with their direct members (enabled
 * people and managed groups). Disabled accounts and unmanaged groups never appear. Nesting is read
 * by joining usergroup_closure in the same statements, never by walking groups here: a read is
 * a fixed few statements, whatever the depth.
 */
import { op, type Handle } from './handle';
import { managedGroupSql } from './groups';

export interface PersonRow {
  reference_id: string;
  username: string;
  name: string;
  email: string;
  created_at: number;
  /** Names of the managed groups it is in, directly or through groups inside groups. */
  groups: string[];
  /** Its POSIX number (uidNumber, and its user-private group's gidNumber); null only for a row written around the accounts' code. */
  posix_id: number | null;
  /** Its login shell; null: the default. */
  login_shell: string | null;
  /** Its SSH public keys, as authorized_keys lines (type, key, comment), oldest first. */
  ssh_keys: string[];
}

export interface GroupEntryRow {
  /** The store's id: where the next page of a group read starts (never served). */
  id: number;
  reference_id: string;
  name: string;
  /** Usernames of its enabled direct members. */
  members: string[];
  /** Names of the managed groups directly inside it. */
  memberGroups: string[];
  /** Of the people (usernames) and groups (names, lower case) a query's `chain` named, those inside it at any depth. */
  chain: { people: string[]; groups: string[] };
  /** Its POSIX number (gidNumber); null only for a row written around the groups' code. */
  posix_id: number | null;
  /** Usernames of the enabled people inside it at any depth (memberUid), when the query asked (`uids`); else empty. */
  uids: string[];
}

const enabled = (h: { dialect: string }, a: string) => (h.dialect === 'postgres' ? `${a}.disabled = false` : `${a}.disabled = 0`);
const marks = (list: readonly unknown[]) => list.map(() => '?').join(', ');

/** One page of a read: rows after `after` (the last row's key of the page before), at most `limit`. */
export interface Page<K> {
  after?: K;
  limit: number;
}

/**
 * Enabled accounts, by username, optionally only those named (one indexed read each way); with
 * `page`, the next `limit` of them after a username (a whole directory is read a page at a time).
 */
export const readPeople = op(
  async (
    h,
    only?: { username?: string; email?: string; referenceId?: string; group?: string; posixId?: number },
    page?: Page<string>,
  ): Promise<PersonRow[]> => {
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
    if (only?.posixId !== undefined) {
      where.push('a.posix_id = ?');
      params.push(only.posixId);
    }
    if (only?.group !== undefined) {
      // From the group (by its name's index) and the groups inside it to their members, not from
      // every account to its groups: memberOf holds every group, so its members are the group's
      // own and those of every group below it.
      where.push(
        `a.id IN (SELECT gm.account_id FROM membership gm WHERE gm.usergroup_id IN (
         SELECT gg.id FROM usergroup gg WHERE lower(gg.name) = ? AND ${managedGroupSql('gg')}
         UNION SELECT gc.descendant_id FROM usergroup gg JOIN usergroup_closure gc ON gc.ancestor_id = gg.id WHERE lower(gg.name) = ? AND ${managedGroupSql('gg')}))`,
      );
      params.push(only.group.toLowerCase(), only.group.toLowerCase());
    }
    if (page?.after !== undefined) {
      where.push('a.username > ?');
      params.push(page.after);
    }
    // The SSH keys in the same statement, one line each, by the account's index on ssh_key.
    const keys =
      h.dialect === 'postgres'
        ? `(SELECT string_agg(k.key_type || ' ' || k.key_data || ' ' || k.comment, E'\\n' ORDER BY k.id) FROM ssh_key k WHERE k.account_id = a.id)`
        : `(SELECT group_concat(x.line, char(10)) FROM (SELECT k.key_type || ' ' || k.key_data || ' ' || k.comment AS line FROM ssh_key k WHERE k.account_id = a.id ORDER BY k.id) x)`;
    const people = await h.all(
      `SELECT a.id, a.reference_id, a.username, a.name, a.email, a.created_at, a.posix_id, a.login_shell, ${keys} AS ssh_keys
     FROM user_account a WHERE ${where.join(' AND ')} ORDER BY a.username${page ? ` LIMIT ${Number(page.limit)}` : ''}`,
      params,
    );
    if (people.length === 0) return [];
    // Each person's groups: the direct ones and, through the closure, every group above them.
    // UNION keeps one row per (person, group) however many ways lead there. A page reads the
    // groups of its own people only.
    const whom = page ? [`a.id IN (${marks(people)})`] : where;
    const whomParams = page ? people.map((p) => Number(p.id)) : params;
    const memberships = await h.all(
      `SELECT x.account_id, g.name FROM (
       SELECT m.account_id, m.usergroup_id FROM membership m JOIN user_account a ON a.id = m.account_id WHERE ${whom.join(' AND ')}
       UNION
       SELECT m.account_id, c.ancestor_id FROM membership m JOIN usergroup_closure c ON c.descendant_id = m.usergroup_id
         JOIN user_account a ON a.id = m.account_id WHERE ${whom.join(' AND ')}
     ) x JOIN usergroup g ON g.id = x.usergroup_id WHERE ${managedGroupSql('g')} ORDER BY g.name`,
      [...whomParams, ...whomParams],
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
      posix_id: p.posix_id === null || p.posix_id === undefined ? null : Number(p.posix_id),
      login_shell: p.login_shell === null || p.login_shell === undefined ? null : String(p.login_shell),
      ssh_keys: typeof p.ssh_keys === 'string' && p.ssh_keys !== '' ? p.ssh_keys.split('\n').map((l) => l.trimEnd()) : [],
    }));
  },
);

/** What a group read narrows to and what it reads besides the groups. */
export interface GroupQuery {
  name?: string;
  /** Only the groups this enabled person (by username) is a direct member of; with `deep`, in at any depth. */
  member?: string;
  /** Only the groups this managed group (by name) is directly inside; with `deep`, inside at any depth. */
  memberGroup?: string;
  deep?: boolean;
  /** false: each group's member lists are left out (only `member` or `memberGroup`, when given and not deep, is listed). */
  members?: boolean;
  /** People (usernames) and groups (names) each group row reports in `chain` when they are inside it at any depth. */
  chain?: { people: readonly string[]; groups: readonly string[] };
  /** Only the group of this POSIX number (gidNumber). */
  posixId?: number;
  /** Whether each group's people at any depth (memberUid) are read. */
  uids?: boolean;
}

/**
 * Managed groups with their direct members, optionally narrowed (a fixed few statements, each
 * indexed); with `page`, the next `limit` groups after a (name, id) in name order.
 */
export const readGroups = op(async (h, q: GroupQuery = {}, page?: Page<{ name: string; id: number }>): Promise<GroupEntryRow[]> => {
  const where = [managedGroupSql('g')];
  const params: unknown[] = [];
  if (q.name !== undefined) {
    where.push('lower(g.name) = ?');
    params.push(q.name.toLowerCase());
  }
  if (q.posixId !== undefined) {
    where.push('g.posix_id = ?');
    params.push(q.posixId);
  }
  if (q.member !== undefined) {
    // From the person (by username) to their groups (and, deep, to every group above those),
    // not from every group through its members.
    const direct = `SELECT mm.usergroup_id FROM user_account ma JOIN membership mm ON mm.account_id = ma.id WHERE ma.username = ? AND ${enabled(h, 'ma')}`;
    const above = `SELECT mc.ancestor_id FROM user_account ma JOIN membership mm ON mm.account_id = ma.id
      JOIN usergroup_closure mc ON mc.descendant_id = mm.usergroup_id WHERE ma.username = ? AND ${enabled(h, 'ma')}`;
    where.push(`g.id IN (${q.deep ? `${direct} UNION ${above}` : direct})`);
    params.push(...(q.deep ? [q.member, q.member] : [q.member]));
  }
  if (q.memberGroup !== undefined) {
    where.push(
      q.deep
        ? `g.id IN (SELECT nc.ancestor_id FROM usergroup ng JOIN usergroup_closure nc ON nc.descendant_id = ng.id WHERE lower(ng.name) = ? AND ${managedGroupSql('ng')})`
        : `g.id IN (SELECT nn.parent_id FROM usergroup ng JOIN usergroup_nesting nn ON nn.child_id = ng.id WHERE lower(ng.name) = ? AND ${managedGroupSql('ng')})`,
    );
    params.push(q.memberGroup.toLowerCase());
  }
  if (page?.after !== undefined) {
    where.push('(g.name > ? OR (g.name = ? AND g.id > ?))');
    params.push(page.after.name, page.after.name, page.after.id);
  }
  const groups = await h.all(
    `SELECT g.id, g.reference_id, g.name, g.posix_id FROM usergroup g WHERE ${where.join(' AND ')} ORDER BY g.name, g.id${page ? ` LIMIT ${Number(page.limit)}` : ''}`,
    params,
  );
  if (groups.length === 0) return [];
  const ids = groups.map((g) => Number(g.id));
  const members = new Map<number, { people: string[]; groups: string[] }>(ids.map((id) => [id, { people: [], groups: [] }]));
  if (q.members === false) {
    // Only the narrowing member, which every group read holds (deep: none, the chain answers for it).
    for (const id of ids) {
      if (q.member !== undefined && !q.deep) members.get(id)!.people.push(q.member);
      if (q.memberGroup !== undefined && !q.deep) members.get(id)!.groups.push(q.memberGroup);
    }
  } else {
    // Direct members: enabled people, then the managed groups directly inside (kind 1), in one statement.
    const rows = await h.all(
      `SELECT m.usergroup_id AS parent_id, a.username AS name, 0 AS kind FROM membership m JOIN user_account a ON a.id = m.account_id
         WHERE ${enabled(h, 'a')} AND m.usergroup_id IN (${marks(ids)})
       UNION ALL
       SELECT n.parent_id, c.name, 1 FROM usergroup_nesting n JOIN usergroup c ON c.id = n.child_id
         WHERE n.parent_id IN (${marks(ids)}) AND ${managedGroupSql('c')}
       ORDER BY 3, 2`,
      [...ids, ...ids],
    );
    for (const r of rows) members.get(Number(r.parent_id))?.[Number(r.kind) === 1 ? 'groups' : 'people'].push(String(r.name));
  }
  const chain = await readChain(h, q.chain, new Set(ids));
  const uids = new Map<number, string[]>();
  if (q.uids) {
    // Everyone inside each group at any depth: its own members and those of every group below it (UNION: one row each).
    const rows = await h.all(
      `SELECT x.group_id, a.username FROM (
         SELECT m.usergroup_id AS group_id, m.account_id FROM membership m WHERE m.usergroup_id IN (${marks(ids)})
         UNION
         SELECT c.ancestor_id, m.account_id FROM usergroup_closure c JOIN membership m ON m.usergroup_id = c.descendant_id WHERE c.ancestor_id IN (${marks(ids)})
       ) x JOIN user_account a ON a.id = x.account_id WHERE ${enabled(h, 'a')} ORDER BY a.username`,
      [...ids, ...ids],
    );
    for (const r of rows) {
      const id = Number(r.group_id);
      const list = uids.get(id);
      if (list) list.push(String(r.username));
      else uids.set(id, [String(r.username)]);
    }
  }
  return groups.map((g) => {
    const id = Number(g.id);
    const m = members.get(id)!;
    return {
      id,
      reference_id: String(g.reference_id),
      name: String(g.name),
      members: m.people,
      memberGroups: m.groups,
      chain: chain.get(id) ?? { people: [], groups: [] },
      posix_id: g.posix_id === null || g.posix_id === undefined ? null : Number(g.posix_id),
      uids: uids.get(id) ?? [],
    };
  });
});

/**
 * For each group in `ids`, which of the asked people and groups are inside it at any depth: one
 * statement, from the asked ones up through the closure (a person through each group they are a
 * direct member of). Disabled people and unmanaged groups are inside nothing, as in every answer.
 */
async function readChain(h: Handle, asked: GroupQuery['chain'], ids: ReadonlySet<number>): Promise<Map<number, { people: string[]; groups: string[] }>> {
  const out = new Map<number, { people: string[]; groups: string[] }>();
  const people = [...new Set(asked?.people ?? [])];
  const groups = [...new Set((asked?.groups ?? []).map((g) => g.toLowerCase()))];
  if (people.length === 0 && groups.length === 0) return out;
  const parts: string[] = [];
  const params: unknown[] = [];
  if (people.length > 0) {
    parts.push(
      `SELECT m.usergroup_id AS group_id, a.username AS name, 0 AS kind FROM user_account a JOIN membership m ON m.account_id = a.id
         WHERE a.username IN (${marks(people)}) AND ${enabled(h, 'a')}`,
      `SELECT c.ancestor_id AS group_id, a.username AS name, 0 AS kind FROM user_account a JOIN membership m ON m.account_id = a.id
         JOIN usergroup_closure c ON c.descendant_id = m.usergroup_id WHERE a.username IN (${marks(people)}) AND ${enabled(h, 'a')}`,
    );
    params.push(...people, ...people);
  }
  if (groups.length > 0) {
    parts.push(
      `SELECT c.ancestor_id AS group_id, lower(x.name) AS name, 1 AS kind FROM usergroup x JOIN usergroup_closure c ON c.descendant_id = x.id
         WHERE lower(x.name) IN (${marks(groups)}) AND ${managedGroupSql('x')}`,
    );
    params.push(...groups);
  }
  for (const r of await h.all(parts.join(' UNION '), params)) {
    const id = Number(r.group_id);
    if (!ids.has(id)) continue;
    const entry = out.get(id) ?? { people: [], groups: [] };
    entry[Number(r.kind) === 1 ? 'groups' : 'people'].push(String(r.name));
    out.set(id, entry);
  }
  return out;
}
