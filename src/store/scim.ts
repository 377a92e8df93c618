/**
 * SCIM's reads of the store: its tokens, and people and managed groups found by a filter. A
 * filter arrives as a predicate over a fixed set of columns (scim/filter.ts checks and maps the
 * attributes); it becomes one WHERE clause with every value bound, run with LIMIT and OFFSET,
 * never a scan of every account in memory.
 */
import { type Handle, isUniqueViolation, op, type Row } from './handle';
import { decodeRow } from './schema';
import { managedGroupSql } from './groups';
import { groupAndBelowSql, memberGroupsSql } from './nesting';

/** A group that is a SCIM Group resource (`g` its alias): a managed group that is not built in (administrators, users). */
const scimGroupSql = (g: string) => `(${managedGroupSql(g)} AND ${g}.system_role IS NULL)`;

export interface ScimTokenRow {
  id: string;
  name: string;
  token_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

/** The columns a filter may name, per resource. */
/** `email_key`: the address's identity key (scim/filter.ts normalizes the value), for eq on the unique index. */
export type UserColumn = 'id' | 'username' | 'external_id' | 'email' | 'email_key' | 'name' | 'active' | 'created' | 'modified';
export type GroupColumn = 'id' | 'name' | 'external_id' | 'created' | 'modified';

/** A filter as the store runs it (built by scim/filter.ts from a SCIM filter). */
export type Predicate<C extends string> =
  | { kind: 'and' | 'or'; parts: Array<Predicate<C>> }
  | { kind: 'not'; part: Predicate<C> }
  | { kind: 'const'; value: boolean }
  | { kind: 'present'; column: C }
  | { kind: 'compare'; column: C; op: 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le'; value: string | number | boolean };

/**
 * `ci`: compared case-insensitively. `lower`: the column holds lower case already (usernames), so
 * eq compares it as it is and its index serves the lookup.
 */
const USER_SQL: Record<UserColumn, { sql: string; ci?: boolean; lower?: boolean; bool?: boolean }> = {
  id: { sql: 'a.reference_id' },
  username: { sql: 'a.username', ci: true, lower: true },
  email_key: { sql: 'a.email_key' },
  external_id: { sql: 'a.external_id' },
  email: { sql: 'a.email', ci: true },
  name: { sql: 'a.name' },
  active: { sql: 'a.disabled', bool: true },
  created: { sql: 'a.created_at' },
  modified: { sql: 'a.updated_at' },
};

const GROUP_SQL: Record<GroupColumn, { sql: string; ci?: boolean; bool?: boolean }> = {
  id: { sql: 'g.reference_id' },
  name: { sql: 'g.name', ci: true },
  external_id: { sql: 'g.external_id' },
  created: { sql: 'g.created_at' },
  modified: { sql: 'g.updated_at' },
};

const likeEscape = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The predicate as SQL with its bound values. */
function compile<C extends string>(
  p: Predicate<C>,
  columns: Record<C, { sql: string; ci?: boolean; lower?: boolean; bool?: boolean }>,
  params: unknown[],
): string {
  switch (p.kind) {
    case 'and':
    case 'or':
      return `(${p.parts.map((x) => compile(x, columns, params)).join(p.kind === 'and' ? ' AND ' : ' OR ')})`;
    case 'not':
      return `(NOT ${compile(p.part, columns, params)})`;
    case 'const':
      return p.value ? '(1 = 1)' : '(1 = 0)';
    case 'present': {
      const c = columns[p.column];
      return c.bool ? '(1 = 1)' : `(${c.sql} IS NOT NULL AND ${c.sql} <> '')`;
    }
    case 'compare': {
      const c = columns[p.column];
      if (c.bool) {
        // active is NOT disabled: `active eq true` is `disabled = false`.
        const wanted = p.value === true;
        params.push(!wanted);
        return p.op === 'ne' ? `(${c.sql} <> ?)` : `(${c.sql} = ?)`;
      }
      const col = c.ci && !(c.lower && (p.op === 'eq' || p.op === 'ne')) ? `LOWER(${c.sql})` : c.sql;
      const value = typeof p.value === 'string' && c.ci ? p.value.toLowerCase() : p.value;
      switch (p.op) {
        case 'eq':
          params.push(value);
          return `(${col} = ?)`;
        case 'ne':
          params.push(value);
          return `(${c.sql} IS NULL OR ${col} <> ?)`;
        case 'co':
        case 'sw':
        case 'ew': {
          const v = likeEscape(String(value));
          params.push(p.op === 'co' ? `%${v}%` : p.op === 'sw' ? `${v}%` : `%${v}`);
          return `(${col} LIKE ? ESCAPE '\\')`;
        }
        default:
          params.push(value);
          return `(${col} ${{ gt: '>', ge: '>=', lt: '<', le: '<=' }[p.op]} ?)`;
      }
    }
  }
}

/** For each row of a page (by its id), the (reference id, name) pairs `sql` finds for it: a person's groups, a group's people. */
async function pairsOf(h: Handle, page: Row[], sql: (marks: string) => string): Promise<Map<number, Array<[string, string]>>> {
  const out = new Map<number, Array<[string, string]>>();
  const ids = page.map((r) => Number(r.id));
  if (ids.length === 0) return out;
  for (const r of await h.all(sql(ids.map(() => '?').join(', ')), ids)) {
    const list = out.get(Number(r.owner)) ?? [];
    list.push([String(r.a), String(r.b)]);
    out.set(Number(r.owner), list);
  }
  return out;
}

export interface ScimUserRow {
  reference_id: string;
  username: string;
  email: string;
  name: string;
  disabled: boolean;
  external_id: string | null;
  created_at: number;
  updated_at: number;
  /**
   * Every managed group the person is in, directly or through nesting (`direct`: a membership of
   * its own, not only through a group inside it). The built-in ones (administrators, users) are
   * managed groups wherever apps see groups, but not SCIM Group resources.
   */
  groups: ScimUserGroup[];
}

export interface ScimUserGroup {
  reference_id: string;
  name: string;
  builtIn: boolean;
  direct: boolean;
}

export interface ScimGroupRow {
  reference_id: string;
  name: string;
  external_id: string | null;
  created_at: number;
  updated_at: number;
  /** People: [reference_id, username]. */
  members: Array<[string, string]>;
  /** The SCIM Groups directly inside it: [reference_id, name]. */
  memberGroups: Array<[string, string]>;
}

/** A page of people matching `where` (null: everyone), oldest first, and how many match in all. */
export const findScimUsers = op(
  async (h, where: Predicate<UserColumn> | null, offset: number, limit: number): Promise<{ total: number; rows: ScimUserRow[] }> => {
    const params: unknown[] = [];
    const clause = where ? compile(where, USER_SQL, params) : '(1 = 1)';
    const count = async () => Number((await h.all(`SELECT COUNT(*) AS n FROM user_account a WHERE ${clause}`, params))[0]?.n ?? 0);
    if (limit === 0) return { total: await count(), rows: [] };
    // The page, each person's managed groups and the number of matches in one statement: a
    // provisioning service's `userName eq` lookup before every create is one trip to the store.
    // Each group once: a group reached directly and through a group inside it is a direct one.
    const pairs = `SELECT g.reference_id AS r, g.name AS n, CASE WHEN g.system_role IS NULL THEN 0 ELSE 1 END AS b, MAX(x.direct) AS d
         FROM (${memberGroupsSql('a.id', true)}) x JOIN usergroup g ON g.id = x.usergroup_id
         WHERE ${managedGroupSql('g')} GROUP BY g.id, g.reference_id, g.name, g.system_role`;
    const groups =
      h.dialect === 'postgres'
        ? `(SELECT COALESCE(json_agg(json_build_array(y.r, y.n, y.b, y.d) ORDER BY y.n), '[]'::json)::text FROM (${pairs}) y)`
        : `(SELECT json_group_array(json_array(y.r, y.n, y.b, y.d)) FROM (${pairs} ORDER BY g.name) y)`;
    const raw = await h.all(
      `SELECT a.reference_id, a.username, a.email, a.name, a.disabled, a.external_id, a.created_at, a.updated_at,
         ${groups} AS group_pairs, COUNT(*) OVER () AS total_matches
       FROM user_account a WHERE ${clause} ORDER BY a.id LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    );
    // No row: nothing matched (from the start), or the page starts past the last match.
    const total = raw.length > 0 ? Number(raw[0].total_matches) : offset === 0 ? 0 : await count();
    return {
      total,
      rows: raw.map((r) => {
        const { group_pairs: pairsJson, total_matches: _total, ...fields } = r;
        void _total;
        return {
          ...decodeRow<Omit<ScimUserRow, 'groups'>>('user_account', fields),
          groups: (JSON.parse(String(pairsJson ?? '[]')) as Array<[string, string, number, number]>).map(([id, name, builtIn, direct]): ScimUserGroup => ({
            reference_id: id,
            name,
            builtIn: Number(builtIn) === 1,
            direct: Number(direct) === 1,
          })),
        };
      }),
    };
  },
);

/**
 * A page of managed groups matching `where`, with their members (unless `members` is false): the
 * people and the SCIM Groups directly inside each, two statements for the whole page.
 */
export const findScimGroups = op(
  async (h, where: Predicate<GroupColumn> | null, offset: number, limit: number, members = true): Promise<{ total: number; rows: ScimGroupRow[] }> => {
    const params: unknown[] = [];
    const clause = `${scimGroupSql('g')} AND ${where ? compile(where, GROUP_SQL, params) : '(1 = 1)'}`;
    const [countRow] = await h.all(`SELECT COUNT(*) AS n FROM usergroup g WHERE ${clause}`, params);
    const total = Number(countRow?.n ?? 0);
    if (limit === 0 || total === 0) return { total, rows: [] };
    const raw = await h.all(
      `SELECT g.id, g.reference_id, g.name, g.external_id, g.created_at, g.updated_at FROM usergroup g WHERE ${clause} ORDER BY g.id LIMIT ? OFFSET ?`,
      [...params, limit, offset],
    );
    const byGroup = members
      ? await pairsOf(
          h,
          raw,
          (marks) => `SELECT m.usergroup_id AS owner, a.reference_id AS a, a.username AS b FROM membership m JOIN user_account a ON a.id = m.account_id
         WHERE m.usergroup_id IN (${marks}) ORDER BY a.id`,
        )
      : new Map<number, Array<[string, string]>>();
    // A built-in group or an account's own one put inside by the shell is no SCIM Group: not listed (its $ref would not answer), and left alone by writes.
    const groupsByGroup = members
      ? await pairsOf(
          h,
          raw,
          (marks) => `SELECT n.parent_id AS owner, c.reference_id AS a, c.name AS b FROM usergroup_nesting n JOIN usergroup c ON c.id = n.child_id
         WHERE n.parent_id IN (${marks}) AND ${scimGroupSql('c')} ORDER BY c.id`,
        )
      : new Map<number, Array<[string, string]>>();
    return {
      total,
      rows: raw.map((r) => {
        const { id, ...fields } = r;
        return {
          ...decodeRow<Omit<ScimGroupRow, 'members' | 'memberGroups'>>('usergroup', fields),
          members: byGroup.get(Number(id)) ?? [],
          memberGroups: groupsByGroup.get(Number(id)) ?? [],
        };
      }),
    };
  },
);

export const insertScimToken = op(async (h, row: Omit<ScimTokenRow, 'created_at' | 'last_used_at' | 'revoked_at'>): Promise<boolean> => {
  try {
    await h.k('scim_token').insert({ ...row, created_at: h.clock.now(), last_used_at: null, revoked_at: null });
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
});

export const listScimTokens = op(async (h): Promise<ScimTokenRow[]> => {
  const rows = await h.k('scim_token').orderBy([
    { column: 'created_at', order: 'asc' },
    { column: 'id', order: 'asc' },
  ]);
  return rows.map((r: Record<string, unknown>) => decodeRow<ScimTokenRow>('scim_token', r));
});

/** The live token with this hash, marking its use (at most once a minute: a busy sync writes little). */
export const useScimToken = op(async (h, hash: string): Promise<ScimTokenRow | undefined> => {
  // Every SCIM request asks: a prepared read on the read pool, not the query builder on the writer's connection.
  const [row] = await h.all('SELECT * FROM scim_token WHERE token_hash = ? AND revoked_at IS NULL', [hash]);
  if (!row) return undefined;
  const token = decodeRow<ScimTokenRow>('scim_token', row);
  const now = h.clock.now();
  if (token.last_used_at === null || now - token.last_used_at > 60_000) await h.k('scim_token').where({ id: token.id }).update({ last_used_at: now });
  return token;
});

/** Revokes the token named (by name or id); false when there is no live one. */
export const revokeScimToken = op(async (h, nameOrId: string): Promise<ScimTokenRow | undefined> => {
  const row = await h.k('scim_token').where({ name: nameOrId }).orWhere({ id: nameOrId }).first();
  if (!row || row.revoked_at !== null) return undefined;
  await h.k('scim_token').where({ id: row.id }).update({ revoked_at: h.clock.now() });
  return decodeRow<ScimTokenRow>('scim_token', row);
});

/** Sets the externalId a provisioning service gave a group (null: none). */
export const setGroupExternalId = op(async (h, referenceId: string, externalId: string | null): Promise<void> => {
  await h.k('usergroup').where({ reference_id: referenceId }).update({ external_id: externalId });
});

/**
 * Which of these reference ids are people and which are SCIM Groups (a group's members may be
 * either; a built-in group or an account's own group is neither): two indexed lookups per 500 ids.
 */
export const classifyReferences = op(async (h, references: readonly string[]): Promise<{ people: Set<string>; groups: Set<string> }> => {
  const people = new Set<string>();
  const groups = new Set<string>();
  for (let i = 0; i < references.length; i += 500) {
    const part = references.slice(i, i + 500);
    const marks = part.map(() => '?').join(', ');
    for (const r of await h.all(`SELECT reference_id FROM user_account WHERE reference_id IN (${marks})`, part)) people.add(String(r.reference_id));
    for (const r of await h.all(`SELECT g.reference_id FROM usergroup g WHERE g.reference_id IN (${marks}) AND ${scimGroupSql('g')}`, part)) {
      groups.add(String(r.reference_id));
    }
  }
  return { people, groups };
});

/** Everyone in group `referenceId` directly or through a group inside it, by reference id: one statement. */
export const peopleBelow = op(async (h, referenceId: string): Promise<string[]> => {
  const rows = await h.all(
    `SELECT DISTINCT a.id, a.reference_id FROM membership m JOIN user_account a ON a.id = m.account_id
     WHERE m.usergroup_id IN (${groupAndBelowSql('(SELECT t.id FROM usergroup t WHERE t.reference_id = ?)')}) ORDER BY a.id`,
    [referenceId, referenceId],
  );
  return rows.map((r) => String(r.reference_id));
});

/** The groups group `referenceId` is inside, at any depth, by reference id: one statement. */
export const groupsAbove = op(async (h, referenceId: string): Promise<string[]> => {
  const rows = await h.all(
    `SELECT g.reference_id FROM usergroup_closure uc JOIN usergroup d ON d.id = uc.descendant_id JOIN usergroup g ON g.id = uc.ancestor_id
     WHERE d.reference_id = ? ORDER BY g.id`,
    [referenceId],
  );
  return rows.map((r) => String(r.reference_id));
});

export interface ScimTargetRow {
  id: number;
  reference_id: string;
  name: string;
  url: string;
  token: string;
  /** JSON: group reference ids; [] is everyone. */
  groups: string;
  created_at: number;
}

const decodeTarget = (r: Record<string, unknown>) => decodeRow<ScimTargetRow>('scim_target', r);

/** Adds a push target; false when its name is taken. */
export const insertScimTarget = op(async (h, row: Omit<ScimTargetRow, 'id' | 'created_at'>): Promise<ScimTargetRow | undefined> => {
  try {
    await h.k('scim_target').insert({ ...row, created_at: h.clock.now() });
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
  return decodeTarget((await h.k('scim_target').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
});

export const listScimTargets = op(async (h): Promise<ScimTargetRow[]> => (await h.k('scim_target').orderBy('id')).map(decodeTarget));

/** A target by name or reference id. */
export const findScimTarget = op(async (h, nameOrId: string): Promise<ScimTargetRow | undefined> => {
  const row = await h.k('scim_target').where({ name: nameOrId }).orWhere({ reference_id: nameOrId }).first();
  return row ? decodeTarget(row) : undefined;
});

export const findScimTargetById = op(async (h, id: number): Promise<ScimTargetRow | undefined> => {
  const row = await h.k('scim_target').where({ id }).first();
  return row ? decodeTarget(row) : undefined;
});

/** Changes a target's address, token or groups (a configuration file's apply). */
export const updateScimTarget = op(async (h, id: number, row: Partial<Pick<ScimTargetRow, 'url' | 'token' | 'groups'>>): Promise<void> => {
  if (Object.keys(row).length > 0) await h.k('scim_target').where({ id }).update(row);
});

/** Removes a target; its queued messages and what it was pushed go with it (foreign keys). */
export const deleteScimTarget = op(async (h, id: number): Promise<boolean> => (await h.k('scim_target').where({ id }).del()) > 0);

/** The id a target gave each of these people or groups (those pushed to it). */
export const pushedIds = op(async (h, targetId: number, references: readonly string[]): Promise<Map<string, string>> => {
  const out = new Map<string, string>();
  for (let i = 0; i < references.length; i += 500) {
    const part = references.slice(i, i + 500);
    const rows = await h.all(`SELECT reference_id, remote_id FROM scim_pushed WHERE target_id = ? AND reference_id IN (${part.map(() => '?').join(', ')})`, [
      targetId,
      ...part,
    ]);
    for (const r of rows) out.set(String(r.reference_id), String(r.remote_id));
  }
  return out;
});

/** Every person or group a target holds from Gatehouse, by reference id. */
export const pushedReferences = op(async (h, targetId: number, kind: 'User' | 'Group'): Promise<string[]> =>
  (await h.all('SELECT reference_id FROM scim_pushed WHERE target_id = ? AND kind = ? ORDER BY reference_id', [targetId, kind])).map((r) =>
    String(r.reference_id),
  ),
);

/** Records (or forgets, with null) the id a target gave a person or group. */
export const setPushed = op(async (h, targetId: number, kind: 'User' | 'Group', referenceId: string, remoteId: string | null): Promise<void> => {
  await h.k('scim_pushed').where({ target_id: targetId, reference_id: referenceId }).del();
  if (remoteId !== null) await h.k('scim_pushed').insert({ target_id: targetId, reference_id: referenceId, kind, remote_id: remoteId });
});

/** How many people and groups each target holds, and its queue: for listings. */
export const targetFigures = op(
  async (
    h,
    targetId: number,
  ): Promise<{ users: number; groups: number; pending: number; failed: number; lastError: string | null; lastDeliveredAt: number | null }> => {
    const [counts] = await h.all(
      `SELECT SUM(CASE WHEN kind = 'User' THEN 1 ELSE 0 END) AS n_users, SUM(CASE WHEN kind = 'Group' THEN 1 ELSE 0 END) AS n_groups FROM scim_pushed WHERE target_id = ?`,
      [targetId],
    );
    const [queue] = await h.all(
      `SELECT SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) AS pending, SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed,
              MAX(CASE WHEN state = 'delivered' THEN done_at END) AS delivered FROM delivery WHERE scim_target_id = ?`,
      [targetId],
    );
    const [last] = await h.all('SELECT last_error FROM delivery WHERE scim_target_id = ? AND last_error IS NOT NULL ORDER BY id DESC LIMIT 1', [targetId]);
    const n = (v: unknown) => Number(v ?? 0);
    return {
      users: n(counts?.n_users),
      groups: n(counts?.n_groups),
      pending: n(queue?.pending),
      failed: n(queue?.failed),
      lastError: last ? String(last.last_error) : null,
      lastDeliveredAt: queue?.delivered === null || queue?.delivered === undefined ? null : Number(queue.delivered),
    };
  },
);
