/**
 * Groups inside groups: who may put one group inside another, and the audit of it. A member of
 * the inner group is a member of the outer one for every decision and every answer (the store
 * keeps the closure: store/nesting.ts). Putting a group inside another needs what adding a
 * person needs on the outer group, and read on the inner one. Refused whatever the caller:
 * anything inside `administrators` (administrators are named people), `users` inside anything
 * (it holds every account), a cycle, a chain deeper than ten, and an unmanaged group inside a
 * managed one (its owner could otherwise put anyone in a group that opens apps).
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { lockAccounts } from '../store/accounts';
import { findGroupByReference, isManagedGroup, type GroupRow } from '../store/groups';
import { isReference } from '../store/reference';
import { assertNotManaged } from '../managed/managed-by';
import { managedKey, managingFile } from '../store/config-managed';
import { addNesting, removeNestings } from '../store/nesting';
import { assertMayChangeMembers, readableGroup, type MemberChange } from './members';

/** Puts groups (by reference_id) inside a group, or takes them out; returns the groups whose place changed. */
export async function changeNesting(
  s: Services,
  actor: Actor,
  parentReference: string,
  childReferences: readonly string[],
  change: MemberChange,
): Promise<{ group: GroupRow; changed: GroupRow[] }> {
  const result = await s.store.transaction(async (tx) => {
    await lockAccounts(tx); // every membership and nesting change, one at a time: the cycle check holds
    return changeNestingIn(tx, actor, parentReference, childReferences, change);
  });
  await auditNesting(s, actor, result.group, result.changed, change);
  return result;
}

/** changeNesting inside the caller's transaction, which must hold lockAccounts: audit with auditNesting once it has committed. */
export async function changeNestingIn(
  tx: Tx,
  actor: Actor,
  parentReference: string,
  childReferences: readonly string[],
  change: MemberChange,
  options: { besideFile?: boolean } = {},
): Promise<{ group: GroupRow; changed: GroupRow[] }> {
  const parent = await readableGroup(tx, actor.principal, parentReference);
  // A group a configuration file manages has the groups inside it the file says; so does a
  // directory source's group (the groups inside it are the directory's nesting). Groups no file
  // manages may sit beside a file's (an import's subgroup, with besideFile): the file leaves them
  // alone (config-file/kinds/groups.ts), and whoever may change the group may take them out. A
  // source's group may still go inside a group made here: that is the outer group's change.
  const beside = await besideTheFile(tx, change, childReferences, options);
  await assertNotManaged(tx, actor.via, { kind: 'group', id: parent.row.id, name: parent.row.name, part: 'inner groups' }, beside ? 'file' : undefined);
  if (change === 'add' && parent.row.system_role === 'administrators') {
    throw new AppError('forbidden', 'no group goes inside administrators: it holds named people only', { reason: 'administrators_holds_people' });
  }
  await assertMayChangeMembers(tx, actor.principal, parent);
  const parentManaged = change === 'add' && (await isManagedGroup(tx, parent.row.id));
  const references = [...new Set(childReferences.map((r) => r.toLowerCase()))];
  if (change === 'remove') {
    // Whoever may change a group may take out what is inside it, readable or not (an administrator
    // may have put it there). One rebuild of the closure for the whole request.
    const children: GroupRow[] = [];
    for (const reference of references) {
      const child = isReference(reference) ? await findGroupByReference(tx, reference) : undefined;
      if (!child) throw new AppError('not_found', 'no such usergroup record');
      children.push(child);
    }
    const removed = await removeNestings(
      tx,
      children.map((c) => ({ parent_id: parent.row.id, child_id: c.id })),
    );
    return { group: parent.row, changed: children.filter((c) => removed.some((e) => e.child_id === c.id)) };
  }
  const changed: GroupRow[] = [];
  for (const reference of references) {
    const child = (await readableGroup(tx, actor.principal, reference)).row;
    if (child.system_role === 'users')
      throw new AppError('forbidden', 'the users group goes inside no group: it holds every account', { reason: 'users_group_fixed' });
    if (parentManaged && !(await isManagedGroup(tx, child.id))) {
      throw new AppError(
        'forbidden',
        `only managed groups go inside ${parent.row.name}: ${child.name} is an account's own group (its owner could otherwise put anyone in it)`,
        { reason: 'account_group_not_nestable' },
      );
    }
    if (await addNesting(tx, parent.row.id, child.id, { parent: parent.row.name, child: child.name })) changed.push(child);
  }
  return { group: parent.row, changed };
}

/** Whether every group named is one no configuration file manages, put in beside a file's (an import) or taken out. */
async function besideTheFile(tx: Tx, change: MemberChange, references: readonly string[], options: { besideFile?: boolean }): Promise<boolean> {
  if (change === 'add' && options.besideFile !== true) return false;
  for (const reference of references) {
    const child = isReference(reference) ? await findGroupByReference(tx, reference.toLowerCase()) : undefined;
    if (!child || (await managingFile(tx, 'group', managedKey('group', child.name))) !== null) return false;
  }
  return references.length > 0;
}

/** One audit row per group put in or taken out. */
export async function auditNesting(s: Services, actor: Actor, group: GroupRow, changed: readonly GroupRow[], change: MemberChange): Promise<void> {
  for (const child of changed) {
    await s.audit.record(change === 'add' ? 'group_nested' : 'group_unnested', actor, {
      account: null,
      group: group.reference_id,
      group_name: group.name,
      member_group: child.reference_id,
      member_group_name: child.name,
    });
  }
}
