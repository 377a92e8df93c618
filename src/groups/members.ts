/**
 * Who is in a group, whoever asks (the record API by reference ids, the shell by name and email).
 * Listing needs read on the group. Adding or removing needs update on the group row and refer
 * on the membership table (the bit signup's association uses); only administrators change
 * `administrators`, through the administrator rules (the signup action's ownership, the last one
 * stays); `users` holds every account and is not changed by hand. Nothing is cached: the next
 * request of a member reads its groups from the store.
 */
import { AppError, denied } from '../errors';
import type { Actor } from '../actor';
import type { AuditEntry } from '../audit';
import type { Services } from '../services';
import { can, isGuest, type Principal } from '../permission/check';
import type { Tx } from '../store/connection';
import { addMembership, findAccountByReference, lockAccounts, removeMembership } from '../store/accounts';
import { isMember, membersOf, type GroupRow, type MemberRow } from '../store/groups';
import { readGuarded, readWorld, type GuardedRow } from '../store/guarded-rows';
import { makeAdministrator, removeAdministrator } from '../accounts/administrators';
import { isReference } from '../store/reference';
import { assertNotManaged } from '../managed/managed-by';

export type MemberChange = 'add' | 'remove';

const noSuchGroup = () => new AppError('not_found', 'no such usergroup record');

/** The group as `principal` may see it: 404 when it does not exist or may not be read. */
export async function readableGroup(tx: Tx, principal: Principal, referenceId: string): Promise<GuardedRow<GroupRow>> {
  const found = isReference(referenceId) ? await readGuarded<GroupRow>(tx, 'usergroup', { reference_id: referenceId.toLowerCase() }) : undefined;
  if (!found || !can(principal, 'read', found.guard)) throw noSuchGroup();
  return found;
}

export async function listMembers(s: Services, principal: Principal, groupReference: string): Promise<MemberRow[]> {
  const group = await readableGroup(s.store.root, principal, groupReference);
  return membersOf(s.store.root, group.row.id);
}

export async function assertMayChangeMembers(tx: Tx, principal: Principal, group: GuardedRow<GroupRow>): Promise<void> {
  const [table, membership] = await Promise.all([readWorld(tx, 'usergroup'), readWorld(tx, 'membership')]);
  if (!can(principal, 'update', table.guard) || !can(principal, 'update', group.guard)) throw denied(isGuest(principal), 'change the members of this group');
  if (!can(principal, 'refer', membership.guard)) throw denied(isGuest(principal), 'refer to memberships');
  if (group.row.system_role === 'users')
    throw new AppError('forbidden', 'every account is a member of users; its members are not changed by hand', { reason: 'users_group_fixed' });
  if (group.row.system_role === 'administrators' && !principal.isAdmin)
    throw new AppError('forbidden', 'only administrators change who administers', { reason: 'administrators_only' });
}

async function accountsByReference(tx: Tx, references: readonly string[]): Promise<Array<{ id: number; reference_id: string }>> {
  const accounts = [];
  for (const reference of new Set(references.map((r) => r.toLowerCase()))) {
    const account = isReference(reference) ? await findAccountByReference(tx, reference) : undefined;
    if (!account) throw new AppError('not_found', `no such user_account record: ${reference.slice(0, 40)}`);
    accounts.push(account);
  }
  return accounts;
}

/** Adds or removes accounts (by reference_id); returns the accounts whose membership changed. */
export async function changeMembers(
  s: Services,
  actor: Actor,
  groupReference: string,
  accountReferences: readonly string[],
  change: MemberChange,
): Promise<{ group: GroupRow; changed: string[] }> {
  const result = await s.store.transaction(async (tx) => {
    // One lock for every membership change: the last-administrator rule counts under it.
    await lockAccounts(tx);
    return changeMembersIn(tx, actor, groupReference, accountReferences, change);
  });
  await auditMembers(s, actor, result.group, result.changed, change);
  return result;
}

/**
 * changeMembers inside the caller's transaction, which must hold lockAccounts (the
 * last-administrator rule counts under it): audit with auditMembers once it has committed.
 */
export async function changeMembersIn(
  tx: Tx,
  actor: Actor,
  groupReference: string,
  accountReferences: readonly string[],
  change: MemberChange,
): Promise<{ group: GroupRow; changed: string[] }> {
  const group = await readableGroup(tx, actor.principal, groupReference);
  await assertMayChangePeople(tx, actor, group);
  const accounts = await accountsByReference(tx, accountReferences);
  const permission = (await readWorld(tx, 'membership')).row.default_permission;
  const changed: string[] = [];
  for (const account of accounts) {
    if (await applyChange(tx, group.row, account.id, change, permission)) changed.push(account.reference_id);
  }
  return { group: group.row, changed };
}

/**
 * The rules of changing who is in a group, whoever changes it: the permission bits, `users` and
 * `administrators`, a directory source's group (its members are the directory's: only its sync
 * changes them), and administrators out of a provisioning service's reach.
 */
export async function assertMayChangePeople(tx: Tx, actor: Actor, group: GuardedRow<GroupRow>): Promise<void> {
  await assertMayChangeMembers(tx, actor.principal, group);
  // A directory source's group has the directory's members (a change here would be undone by the next sync).
  await assertNotManaged(tx, actor.via, { kind: 'group', id: group.row.id, name: group.row.name, part: 'members' });
  // Who administers is never a provisioning service's to change (no SCIM token makes or ends an administrator).
  if (group.row.system_role === 'administrators' && actor.via === 'scim') {
    throw new AppError('forbidden', 'SCIM does not change who administers (use the shell or the console)', { reason: 'scim_may_not_touch_administrators' });
  }
}

/**
 * changeMembersIn for a writer that changes many groups' people in one transaction (an import's
 * batch, a directory's sync), with the accounts and groups it already holds: each group's rules
 * (assertMayChangePeople) are checked once, the first time it is named, and the membership
 * table's defaults read once. Returns the reference ids of the accounts whose membership changed;
 * audit them with auditMembers or memberEvents once the transaction has committed.
 */
export function membershipWriter(
  tx: Tx,
  actor: Actor,
): (group: Pick<GroupRow, 'reference_id'>, accounts: ReadonlyArray<{ id: number; reference_id: string }>, change: MemberChange) => Promise<string[]> {
  const groups = new Map<string, Promise<GroupRow>>();
  let permission: Promise<number> | undefined;
  const checked = (reference: string) => {
    if (!groups.has(reference))
      groups.set(
        reference,
        readableGroup(tx, actor.principal, reference).then(async (group) => {
          await assertMayChangePeople(tx, actor, group);
          return group.row;
        }),
      );
    return groups.get(reference)!;
  };
  return async (which, accounts, change) => {
    const group = await checked(which.reference_id);
    permission ??= readWorld(tx, 'membership').then((w) => w.row.default_permission);
    const changed: string[] = [];
    for (const account of accounts) {
      if (await applyChange(tx, group, account.id, change, await permission)) changed.push(account.reference_id);
    }
    return changed;
  };
}

/** One audit row per account whose membership changed (administrator_added/removed for administrators). */
export async function auditMembers(s: Services, actor: Actor, group: GroupRow, changed: readonly string[], change: MemberChange): Promise<void> {
  await s.audit.recordAll(actor, memberEvents(group, changed, change));
}

/** The events auditMembers records, for a caller that records them with others (an import). */
export function memberEvents(group: GroupRow, changed: readonly string[], change: MemberChange): AuditEntry[] {
  const administrators = group.system_role === 'administrators';
  const event = administrators
    ? change === 'add'
      ? 'administrator_added'
      : 'administrator_removed'
    : change === 'add'
      ? 'group_member_added'
      : 'group_member_removed';
  return changed.map((account) => ({ event, fields: { account, group: group.reference_id, group_name: group.name } }));
}

async function applyChange(tx: Tx, group: GroupRow, accountId: number, change: MemberChange, permission: number): Promise<boolean> {
  if (group.system_role === 'administrators') {
    if (change === 'remove') return removeAdministrator(tx, accountId);
    if (await isMember(tx, accountId, group.id)) return false;
    await makeAdministrator(tx, accountId);
    return true;
  }
  if (change === 'remove') return removeMembership(tx, accountId, group.id);
  if (await isMember(tx, accountId, group.id)) return false;
  await addMembership(tx, accountId, group.id, permission);
  return true;
}
