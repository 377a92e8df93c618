/**
 * Groups inside groups: the edges (usergroup_nesting) and the closure they imply
 * (usergroup_closure: every ancestor of every group). Every
 * read of "the groups a person is in" joins the closure once (memberGroupsSql); nothing walks the
 * tree in application code. The closure is rebuilt, for the groups a change can reach, by one
 * recursive statement in the transaction that changes an edge or deletes a group, so it is never
 * seen out of step. Callers hold lockAccounts: two changes at once cannot both pass the cycle check.
 */
import { AppError } from '../errors';
import { atomically, op, type Handle } from './handle';

/** How many nestings a chain may have: a group at most this many levels below its topmost ancestor. */
export const MAX_NESTING_DEPTH = 10;
/** How many groups one group may be inside, every level counted: what bounds the closure and every change to it. */
export const MAX_ANCESTORS = 100;
/** Past this many groups a change reaches, the whole closure is rebuilt (one statement, no long parameter list). */
const REBUILD_ALL_PAST = 500;

/**
 * The ids of every group account `accountSql` (a column or `?`, bound twice) is in, directly or
 * through nesting, as a subquery's rows (`usergroup_id`; with `direct`, also `direct`: 1 for a
 * direct membership). A group reached both ways, or by two chains, appears more than once:
 * callers use IN, EXISTS or DISTINCT.
 */
export const memberGroupsSql = (accountSql: string, direct = false) =>
  `SELECT dm.usergroup_id AS usergroup_id${direct ? ', 1 AS direct' : ''} FROM membership dm WHERE dm.account_id = ${accountSql}
   UNION ALL SELECT uc.ancestor_id${direct ? ', 0' : ''} FROM membership im JOIN usergroup_closure uc ON uc.descendant_id = im.usergroup_id WHERE im.account_id = ${accountSql}`;

/**
 * Whether account `accountSql` is in group `groupSql` (columns or `?`), directly or through
 * nesting: an SQL condition. Each `?` is bound twice, account first: see its params.
 */
export const inGroupSql = (accountSql: string, groupSql: string) =>
  `EXISTS (SELECT 1 FROM membership gm WHERE gm.account_id = ${accountSql} AND (gm.usergroup_id = ${groupSql}
     OR gm.usergroup_id IN (SELECT gc.descendant_id FROM usergroup_closure gc WHERE gc.ancestor_id = ${groupSql})))`;

/** The ids of group `groupSql` and of every group inside it, at any depth: a subquery's rows (`usergroup_id`). */
export const groupAndBelowSql = (groupSql: string) =>
  `SELECT ${groupSql} AS usergroup_id UNION SELECT bc.descendant_id FROM usergroup_closure bc WHERE bc.ancestor_id = ${groupSql}`;

export interface NestedGroup {
  id: number;
  reference_id: string;
  name: string;
  system_role: string | null;
}

const nested = (r: Record<string, unknown>): NestedGroup => ({
  id: Number(r.id),
  reference_id: String(r.reference_id),
  name: String(r.name),
  system_role: r.system_role === null || r.system_role === undefined ? null : String(r.system_role),
});

/** The groups one step from `groupId`, by name: inside it (`child`) or holding it (`parent`). */
const nextGroups = (h: Handle, groupId: number, toward: 'child' | 'parent'): Promise<NestedGroup[]> => {
  // Two fixed statements (no column name comes from a caller).
  const [join, where] = toward === 'child' ? ['n.child_id', 'n.parent_id'] : ['n.parent_id', 'n.child_id'];
  return h
    .all(
      `SELECT g.id, g.reference_id, g.name, g.system_role FROM usergroup_nesting n JOIN usergroup g ON g.id = ${join}
       WHERE ${where} = ? ORDER BY g.name, g.id`,
      [groupId],
    )
    .then((rows) => rows.map(nested));
};

/** The groups directly inside `groupId` (its member groups), by name. */
export const childGroups = op((h, groupId: number) => nextGroups(h, groupId, 'child'));

/** The groups `groupId` is directly inside, by name. */
export const parentGroups = op((h, groupId: number) => nextGroups(h, groupId, 'parent'));

/** Every group `groupId` is inside, at any depth (its ancestors). */
export const ancestorIds = op(async (h, groupId: number): Promise<number[]> =>
  (await h.all('SELECT ancestor_id FROM usergroup_closure WHERE descendant_id = ?', [groupId])).map((r) => Number(r.ancestor_id)),
);

async function descendantIds(h: Handle, groupIds: readonly number[]): Promise<number[]> {
  if (groupIds.length === 0) return [];
  const rows = await h.all(`SELECT DISTINCT descendant_id FROM usergroup_closure WHERE ancestor_id IN (${groupIds.map(() => '?').join(', ')})`, groupIds);
  return rows.map((r) => Number(r.descendant_id));
}

/**
 * Recomputes the closure rows of `groupIds` (closed under "inside": every group inside one of
 * them is among them) from the edges, or of every group ('all'): one delete and one recursive
 * insert. The recursion climbs only through the groups being recomputed; above them it takes
 * their ancestors' rows as they are (a change below a group never changes what it is inside). It
 * keeps distinct (group, ancestor) pairs, at most MAX_ANCESTORS for each group, so it ends even
 * on a cycle (none can be made).
 */
async function rebuildClosure(h: Handle, groupIds: readonly number[] | 'all'): Promise<void> {
  if (groupIds !== 'all' && groupIds.length === 0) return;
  if (groupIds === 'all' || groupIds.length > REBUILD_ALL_PAST) {
    await h.run('DELETE FROM usergroup_closure', []);
    await h.run(
      `WITH RECURSIVE up(descendant_id, ancestor_id) AS (
         SELECT n.child_id, n.parent_id FROM usergroup_nesting n
         UNION
         SELECT up.descendant_id, n.parent_id FROM up JOIN usergroup_nesting n ON n.child_id = up.ancestor_id
       )
       INSERT INTO usergroup_closure (ancestor_id, descendant_id) SELECT ancestor_id, descendant_id FROM up`,
      [],
    );
    return;
  }
  const marks = groupIds.map(() => '?').join(', ');
  await h.run(`DELETE FROM usergroup_closure WHERE descendant_id IN (${marks})`, groupIds);
  await h.run(
    `WITH RECURSIVE up(descendant_id, ancestor_id) AS (
       SELECT n.child_id, n.parent_id FROM usergroup_nesting n WHERE n.child_id IN (${marks})
       UNION
       SELECT up.descendant_id, n.parent_id FROM up JOIN usergroup_nesting n ON n.child_id = up.ancestor_id
       WHERE up.ancestor_id IN (${marks})
     )
     INSERT INTO usergroup_closure (ancestor_id, descendant_id)
     SELECT ancestor_id, descendant_id FROM up
     UNION
     SELECT c.ancestor_id, up.descendant_id FROM up JOIN usergroup_closure c ON c.descendant_id = up.ancestor_id
     WHERE up.ancestor_id NOT IN (${marks})`,
    [...groupIds, ...groupIds, ...groupIds],
  );
}

/** `group` and every group inside it: a subquery's rows (`d`), `?` bound once each (twice in all). */
const AND_BELOW = 'SELECT CAST(? AS INTEGER) AS d UNION SELECT descendant_id FROM usergroup_closure WHERE ancestor_id = ?';
/** `group` and every group it is inside: a subquery's rows (`a`), `?` bound twice. */
const AND_ABOVE = 'SELECT CAST(? AS INTEGER) AS a UNION SELECT ancestor_id FROM usergroup_closure WHERE descendant_id = ?';

/**
 * The longest chain of nestings from `groupId` up (`up`) or down: a recursion over distinct
 * (group, length) pairs that stops past MAX_NESTING_DEPTH, so it costs at most that many rows per
 * group it reaches, whatever the number of paths.
 */
async function longestChain(h: Handle, groupId: number, direction: 'up' | 'down'): Promise<number> {
  const [from, to] = direction === 'up' ? ['child_id', 'parent_id'] : ['parent_id', 'child_id'];
  const rows = await h.all(
    `WITH RECURSIVE walk(g, d) AS (
       SELECT CAST(? AS INTEGER), 0
       UNION
       SELECT n.${to}, walk.d + 1 FROM walk JOIN usergroup_nesting n ON n.${from} = walk.g WHERE walk.d <= ${MAX_NESTING_DEPTH}
     )
     SELECT MAX(d) AS longest FROM walk`,
    [groupId],
  );
  return Number(rows[0]?.longest ?? 0);
}

/**
 * Puts group `childId` inside `parentId`. False when it already was. Refused (conflict, nothing
 * changed) when it would make a cycle, a chain deeper than MAX_NESTING_DEPTH, or a group inside
 * more than MAX_ANCESTORS groups. Every check and the closure's new rows cost at most a bounded
 * number of rows per group below `childId`. The caller holds lockAccounts and has checked which
 * groups may nest.
 */
export const addNesting = op(async (h, parentId: number, childId: number, names: { parent: string; child: string }): Promise<boolean> => {
  if (parentId === childId) throw new AppError('conflict', `a group cannot be inside itself (${names.child})`);
  const rows = await h.all(
    `SELECT (SELECT COUNT(*) FROM usergroup_nesting WHERE parent_id = ? AND child_id = ?) AS already,
            (SELECT COUNT(*) FROM usergroup_closure WHERE ancestor_id = ? AND descendant_id = ?) AS cycle`,
    [parentId, childId, childId, parentId],
  );
  if (Number(rows[0].already) > 0) return false;
  if (Number(rows[0].cycle) > 0) throw new AppError('conflict', `a cycle: ${names.parent} is already inside ${names.child}`);
  const depth = (await longestChain(h, parentId, 'up')) + 1 + (await longestChain(h, childId, 'down'));
  if (depth > MAX_NESTING_DEPTH) {
    throw new AppError(
      'conflict',
      `putting ${names.child} inside ${names.parent} would make a chain of ${depth} nested groups; at most ${MAX_NESTING_DEPTH} are allowed`,
    );
  }
  // Every group from the child down gains the parent and its ancestors: none may pass MAX_ANCESTORS.
  const most = await h.all(
    `SELECT MAX(t.n) AS most FROM (SELECT x.d, COUNT(*) AS n FROM (
       SELECT c.descendant_id AS d, c.ancestor_id AS a FROM usergroup_closure c WHERE c.descendant_id IN (${AND_BELOW})
       UNION
       SELECT r.d, s.a FROM (${AND_BELOW}) r CROSS JOIN (${AND_ABOVE}) s
     ) x GROUP BY x.d) t`,
    [childId, childId, childId, childId, parentId, parentId],
  );
  const ancestors = Number(most[0]?.most ?? 0);
  if (ancestors > MAX_ANCESTORS) {
    throw new AppError(
      'conflict',
      `putting ${names.child} inside ${names.parent} would put a group inside ${ancestors} groups; at most ${MAX_ANCESTORS} are allowed`,
    );
  }
  await h.k('usergroup_nesting').insert({ parent_id: parentId, child_id: childId, created_at: h.clock.now() });
  // The new pairs: the parent and its ancestors above the child and everything below it.
  await h.run(
    `INSERT INTO usergroup_closure (ancestor_id, descendant_id)
     SELECT s.a, r.d FROM (${AND_BELOW}) r CROSS JOIN (${AND_ABOVE}) s WHERE 1 = 1
     ON CONFLICT (ancestor_id, descendant_id) DO NOTHING`,
    [childId, childId, parentId, parentId],
  );
  return true;
});

/**
 * Takes these (parent, child) pairs apart, in one go: the closure is rebuilt once for every group
 * they reach. Returns the pairs that were there. The caller holds lockAccounts.
 */
export const removeNestings = op(
  async (h, edges: ReadonlyArray<{ parent_id: number; child_id: number }>): Promise<Array<{ parent_id: number; child_id: number }>> => {
    const removed = [];
    for (const e of edges) {
      if ((await h.k('usergroup_nesting').where({ parent_id: e.parent_id, child_id: e.child_id }).del()) > 0) removed.push(e);
    }
    const children = [...new Set(removed.map((e) => e.child_id))];
    await rebuildClosure(h, [...new Set([...children, ...(await descendantIds(h, children))])]);
    return removed;
  },
);

/**
 * Deletes groups and what was shared with them; their memberships and edges go by the foreign
 * keys, and the groups that were inside them lose those ancestors in the same transaction.
 * Every deletion of a group goes through here.
 */
export const deleteGroupRows = op((root, groupIds: readonly number[]): Promise<void> =>
  atomically(root, async (h) => {
    if (groupIds.length === 0) return;
    const below = (await descendantIds(h, groupIds)).filter((id) => !groupIds.includes(id));
    const marks = groupIds.map(() => '?').join(', ');
    await h.run(`DELETE FROM record_usergroup WHERE record_type = 'usergroup' AND record_id IN (${marks})`, groupIds);
    await h.run(`DELETE FROM usergroup WHERE id IN (${marks})`, groupIds);
    await rebuildClosure(h, below);
  }),
);
