/**
 * Groups inside groups: the edges (usergroup_nesting) and the closure they imply
 * (usergroup_closure: every ancestor of every group, with the longest chain between them). Every
 * read of "the groups a person is in" joins the closure once (memberGroupsSql); nothing walks the
 * tree in application code. The closure is rebuilt, for the groups a change can reach, by one
 * recursive statement in the transaction that changes an edge or deletes a group, so it is never
 * seen out of step. Callers hold lockAccounts: two changes at once cannot both pass the cycle check.
 */
import { AppError } from '../errors';
import { atomically, op, type Handle } from './handle';

/** How many nestings a chain may have: a group at most this many levels below its topmost ancestor. */
export const MAX_NESTING_DEPTH = 10;
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

/** The groups directly inside `groupId` (its member groups), by name. */
export const childGroups = op(async (h, groupId: number): Promise<NestedGroup[]> =>
  (
    await h.all(
      `SELECT g.id, g.reference_id, g.name, g.system_role FROM usergroup_nesting n JOIN usergroup g ON g.id = n.child_id
       WHERE n.parent_id = ? ORDER BY g.name, g.id`,
      [groupId],
    )
  ).map(nested),
);

/** The groups `groupId` is directly inside, by name. */
export const parentGroups = op(async (h, groupId: number): Promise<NestedGroup[]> =>
  (
    await h.all(
      `SELECT g.id, g.reference_id, g.name, g.system_role FROM usergroup_nesting n JOIN usergroup g ON g.id = n.parent_id
       WHERE n.child_id = ? ORDER BY g.name, g.id`,
      [groupId],
    )
  ).map(nested),
);

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
 * Recomputes the closure rows of `groupIds` (and, when `groupIds` is 'all', of every group) from
 * the edges: one delete and one recursive insert. The recursion keeps distinct (group, ancestor,
 * length) triples, so it ends even on a cycle (none can be made) and never counts paths.
 */
async function rebuildClosure(h: Handle, groupIds: readonly number[] | 'all'): Promise<void> {
  if (groupIds !== 'all' && groupIds.length === 0) return;
  const all = groupIds === 'all' || groupIds.length > REBUILD_ALL_PAST;
  const list = all ? [] : (groupIds as readonly number[]);
  const marks = list.map(() => '?').join(', ');
  await h.run(all ? 'DELETE FROM usergroup_closure' : `DELETE FROM usergroup_closure WHERE descendant_id IN (${marks})`, list);
  await h.run(
    `WITH RECURSIVE up(descendant_id, ancestor_id, depth) AS (
       SELECT n.child_id, n.parent_id, 1 FROM usergroup_nesting n ${all ? '' : `WHERE n.child_id IN (${marks})`}
       UNION
       SELECT up.descendant_id, n.parent_id, up.depth + 1 FROM up JOIN usergroup_nesting n ON n.child_id = up.ancestor_id
       WHERE up.depth <= ${MAX_NESTING_DEPTH}
     )
     INSERT INTO usergroup_closure (ancestor_id, descendant_id, depth)
     SELECT ancestor_id, descendant_id, MAX(depth) FROM up GROUP BY ancestor_id, descendant_id`,
    list,
  );
}

/** The groups whose ancestors a change to the edges of `groupId` can change: it and everything inside it. */
async function reach(h: Handle, groupId: number): Promise<number[]> {
  return [groupId, ...(await descendantIds(h, [groupId]))];
}

/**
 * Puts group `childId` inside `parentId`. False when it already was. Refused (conflict, nothing
 * changed) when it would make a cycle or a chain deeper than MAX_NESTING_DEPTH. The caller holds
 * lockAccounts and has checked which groups may nest.
 */
export const addNesting = op(async (h, parentId: number, childId: number, names: { parent: string; child: string }): Promise<boolean> => {
  if (parentId === childId) throw new AppError('conflict', `a group cannot be inside itself (${names.child})`);
  const rows = await h.all(
    `SELECT (SELECT COUNT(*) FROM usergroup_nesting WHERE parent_id = ? AND child_id = ?) AS already,
            (SELECT COUNT(*) FROM usergroup_closure WHERE ancestor_id = ? AND descendant_id = ?) AS cycle,
            (SELECT COALESCE(MAX(depth), 0) FROM usergroup_closure WHERE descendant_id = ?) AS above,
            (SELECT COALESCE(MAX(depth), 0) FROM usergroup_closure WHERE ancestor_id = ?) AS below`,
    [parentId, childId, childId, parentId, parentId, childId],
  );
  const r = rows[0];
  if (Number(r.already) > 0) return false;
  if (Number(r.cycle) > 0) throw new AppError('conflict', `a cycle: ${names.parent} is already inside ${names.child}`);
  const depth = Number(r.above) + 1 + Number(r.below);
  if (depth > MAX_NESTING_DEPTH) {
    throw new AppError(
      'conflict',
      `putting ${names.child} inside ${names.parent} would make a chain of ${depth} nested groups; at most ${MAX_NESTING_DEPTH} are allowed`,
    );
  }
  await h.k('usergroup_nesting').insert({ parent_id: parentId, child_id: childId, created_at: h.clock.now() });
  await rebuildClosure(h, await reach(h, childId));
  return true;
});

/** Takes group `childId` out of `parentId`; false when it was not inside. The caller holds lockAccounts. */
export const removeNesting = op(async (h, parentId: number, childId: number): Promise<boolean> => {
  const deleted = await h.k('usergroup_nesting').where({ parent_id: parentId, child_id: childId }).del();
  if (deleted === 0) return false;
  await rebuildClosure(h, await reach(h, childId));
  return true;
});

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
