/**
 * Groups as a whole: creating one (the record API and the shell), and the shell's views, where a
 * group is named by its name or its reference_id. Deleting goes through the record API's use case.
 */
import { AppError, denied } from '../errors';
import type { Actor, Via } from '../actor';
import type { Services } from '../services';
import { can } from '../permission/check';
import { requireAdministrator } from '../access/caller';
import { parsePermission } from '../permission/bits';
import type { Tx } from '../store/connection';
import { insertGroup, lockAccounts } from '../store/accounts';
import { takePosixId } from '../store/posix';
import {
  findGroupByReference,
  findGroupsByName,
  findManagedGroupsByName,
  listGroups,
  countAllMembers,
  managedGroups,
  isManagedGroup,
  memberOfManaged,
  membersOf,
  type GroupRow,
  type GroupSummary,
} from '../store/groups';
import { readWorld } from '../store/guarded-rows';
import { childGroups, parentGroups } from '../store/nesting';
import { deleteRow, updateRow } from '../store/records';
import { setGroupExternalId as setExternalIdOf } from '../store/scim';
import { findAccountById } from '../store/accounts';
import { validateName, type NameOrigin } from '../accounts/validate';
import { isReference } from '../store/reference';
import { assertGroupNameFree, groupNameKey, type GroupNameIndex } from './names';
import { assertNotManaged } from '../managed/managed-by';

const RESERVED_GROUP_NAMES = new Set(['administrators', 'users']);

/** A new group's name, as a person typed it: the names' one rule (validateName), not a system group's name. */
export const parseGroupName = (value: unknown): string => groupName(value, 'typed');

/** A group's name sent by another system (SCIM, a directory, an import file): its hidden characters removed first. */
export const parseSentGroupName = (value: unknown): string => groupName(value, 'sent');

function groupName(value: unknown, origin: NameOrigin): string {
  if (typeof value !== 'string') throw new AppError('invalid_input', 'name must be a string');
  const name = validateName(value, origin);
  if (RESERVED_GROUP_NAMES.has(name.toLowerCase())) throw new AppError('invalid_input', `the group name ${name} is reserved`);
  if (DELETED_GATE.test(name)) throw new AppError('invalid_input', `the group name ${name} is reserved (an exported gate whose group was deleted)`);
  return name;
}

/**
 * How `config export` writes a gate's group that was deleted: a name no group may take, so the
 * exported file is refused where it names it rather than letting nobody, or a new group, through.
 */
export const DELETED_GATE = /^\(deleted group [^)]*\)$/i;
export const deletedGateName = (id: string) => `(deleted group ${id})`;

export interface NewGroup {
  name: string;
  /** The owning account (its owner bits apply); null: only administrators manage it. */
  ownerId: number | null;
  permission?: number;
  /** The id a provisioning service (SCIM) gave the group, kept as given. */
  externalId?: string | null;
}

/** Creates a group (table create permission, the table's default permission unless given). */
export async function createGroup(s: Services, actor: Actor, input: NewGroup): Promise<GroupRow> {
  const group = await s.store.transaction((tx) => createGroupIn(tx, actor, input));
  await auditGroupCreated(s, actor, group);
  return group;
}

/** createGroup inside the caller's transaction: audit with auditGroupCreated once it has committed. */
export async function createGroupIn(tx: Tx, actor: Actor, input: NewGroup, known?: GroupNameIndex): Promise<GroupRow> {
  const world = await readWorld(tx, 'usergroup');
  if (!can(actor.principal, 'create', world.guard)) throw denied(false, 'create usergroup records');
  await assertGroupNameFree(tx, input.name, null, known);
  // A caller that keeps the index of names keeps it up to date (an ownerless group is managed).
  if (known && input.ownerId === null) known.set(groupNameKey(input.name), { name: input.name });
  const { referenceId } = await insertGroup(tx, {
    name: input.name,
    ownerId: input.ownerId,
    permission: input.permission ?? world.row.default_permission,
    externalId: input.externalId,
    // Its gidNumber, given once (contract section 25).
    posixId: await takePosixId(tx),
  });
  return (await findGroupByReference(tx, referenceId))!;
}

export async function auditGroupCreated(s: Services, actor: Actor, group: GroupRow): Promise<void> {
  await s.audit.record('group_created', actor, { account: null, group: group.reference_id, group_name: group.name });
}

/** A group by reference_id or by name; a name several groups share must be given as an id. */
/**
 * Deletes a group (the shell's and the console's `group delete`; the record API's DELETE takes the
 * same rule through the usergroup record type): never a system group. Its memberships and shares go
 * with it (the store's foreign keys).
 */
export async function deleteGroup(s: Services, actor: Actor, referenceId: string): Promise<void> {
  const group = await s.store.transaction((tx) => deleteGroupIn(tx, referenceId, actor.via));
  await auditGroupDeleted(s, actor, group);
}

/** deleteGroup inside the caller's transaction: the group as it was, for auditGroupDeleted once it has committed. */
export async function deleteGroupIn(tx: Tx, referenceId: string, via: Via = 'cli'): Promise<GroupRow> {
  // Serialized with every configuration file's apply: the check below and the deletion are one step.
  await lockAccounts(tx);
  const found = await findGroupByReference(tx, referenceId);
  if (!found) throw new AppError('not_found', 'no such group');
  assertNotSystemGroup(found, 'delete');
  // A file's group is removed by an apply; a directory source's by its sync (the directory no longer has it), by no one else.
  await assertNotManaged(tx, via, { kind: 'group', id: found.id, name: found.name, part: 'name and existence' });
  await deleteRow(tx, 'usergroup', found.id);
  return found;
}

export async function auditGroupDeleted(s: Services, actor: Actor, group: GroupRow): Promise<void> {
  await s.audit.record('group_deleted', actor, { account: null, group: group.reference_id, group_name: group.name });
}

/** A new name for a group (not a system group's; not a managed group's name or a look-alike of it). */
export async function renameGroup(s: Services, actor: Actor, referenceId: string, name: string): Promise<GroupRow> {
  requireAdministrator(actor, 'rename groups');
  const { group, changed } = await s.store.transaction((tx) => renameGroupIn(tx, actor, referenceId, name));
  if (changed) await auditGroupRenamed(s, actor, group);
  return group;
}

/** renameGroup inside the caller's transaction: when `changed`, audit with auditGroupRenamed once it has committed. */
export async function renameGroupIn(tx: Tx, actor: Actor, referenceId: string, name: string): Promise<{ group: GroupRow; changed: boolean }> {
  requireAdministrator(actor, 'rename groups');
  const found = await findGroupByReference(tx, referenceId);
  if (!found) throw new AppError('not_found', 'no such group');
  assertNotSystemGroup(found, 'update');
  if (found.name === name) return { group: found, changed: false };
  await lockAccounts(tx);
  // A file's group has the file's name, a directory source's the directory's: only an apply, or its sync, renames it.
  await assertNotManaged(tx, actor.via, { kind: 'group', id: found.id, name: found.name, part: 'name and existence' });
  await assertGroupNameFree(tx, name, found.id);
  await updateRow(tx, 'usergroup', found.id, { name });
  return { group: (await findGroupByReference(tx, referenceId))!, changed: true };
}

export async function auditGroupRenamed(s: Services, actor: Actor, group: GroupRow): Promise<void> {
  await s.audit.record('group_renamed', actor, { account: null, group: group.reference_id, group_name: group.name });
}

/** The externalId a provisioning service keeps on a group (not audited, as a person's is not). */
export async function setGroupExternalId(s: Services, actor: Actor, referenceId: string, externalId: string | null): Promise<void> {
  await setGroupExternalIdIn(s.store.root, actor, referenceId, externalId);
}

/** setGroupExternalId inside the caller's transaction. */
export async function setGroupExternalIdIn(tx: Tx, actor: Actor, referenceId: string, externalId: string | null): Promise<void> {
  requireAdministrator(actor, 'change groups');
  await setExternalIdOf(tx, referenceId, externalId);
}

/** System groups (administrators, users) are part of the permission model: never changed or deleted. */
export function assertNotSystemGroup(row: { system_role: string | null }, op: 'update' | 'delete'): void {
  if (row.system_role) throw new AppError('forbidden', `system groups cannot be ${op === 'update' ? 'changed' : 'deleted'}`, { reason: 'system_group' });
}

/**
 * The managed group (store/groups.ts managedGroupSql: the one definition) of this name, ignoring
 * case, that another system's groups mean (an import file's): never `administrators` or `users`.
 */
export async function managedGroupNamed(tx: Tx, name: string): Promise<GroupRow | undefined> {
  return (await findManagedGroupsByName(tx, name)).find((g) => g.system_role === null);
}

export async function resolveGroup(tx: Tx, nameOrId: string): Promise<GroupRow> {
  if (isReference(nameOrId)) {
    const group = await findGroupByReference(tx, nameOrId.toLowerCase());
    if (group) return group;
  }
  const named = await findGroupsByName(tx, nameOrId.trim());
  // Several groups of one name: the shell means the managed one (accounts may name theirs alike).
  const managed = named.length > 1 ? (await managedGroups(tx)).filter((g) => named.some((n) => n.id === g.id)) : [];
  const groups = managed.length === 1 ? managed : named;
  if (groups.length === 0) throw new AppError('not_found', `no group named ${nameOrId.trim().slice(0, 100)}`);
  if (groups.length > 1) {
    throw new AppError(
      'invalid_input',
      `${groups.length} groups are named ${groups[0].name}; name one by its id: ${groups.map((g) => g.reference_id).join(', ')}`,
    );
  }
  return groups[0];
}

/**
 * A group that decides access (a client's allowed groups, a forward-auth rule): by name or id,
 * and only a managed one, since any account can make a group of any name.
 */
export async function resolveGateGroup(tx: Tx, nameOrId: string): Promise<GroupRow> {
  if (DELETED_GATE.test(nameOrId.trim())) {
    throw new AppError('invalid_input', `${nameOrId.trim()}: this gate's group was deleted before the file was exported; name the group that may pass`);
  }
  const group = await resolveGroup(tx, nameOrId);
  if (!(await isManagedGroup(tx, group.id))) {
    throw new AppError(
      'invalid_input',
      `the group ${group.name} is managed by an account that is not an administrator; only groups made from the shell or by administrators can grant access`,
    );
  }
  return group;
}

/**
 * An app's gate (an OIDC client's or a SAML SP's allowed groups, by id): no groups lets every
 * account in; otherwise only members of one of them, counted only while the group is managed
 * (a group any account could make or rename never opens a gate).
 */
export async function passesGate(tx: Tx, accountReference: string | null, gate: readonly string[]): Promise<boolean> {
  return gate.length === 0 || (accountReference !== null && (await memberOfManaged(tx, accountReference, gate)));
}

export interface GroupView {
  reference_id: string;
  name: string;
  system_role: string | null;
  owner: string | null;
  permission: number;
  /** Accounts directly in it. */
  member_count: number;
  /** Accounts in it directly or through the groups inside it (at any depth), each once. */
  all_member_count: number;
  created_at: string;
}

export interface GroupDetail extends GroupView {
  /** The people directly in it. */
  members: Array<{ reference_id: string; email: string; name: string }>;
  /** The groups directly inside it (their members are members of this group too). */
  groups: Array<{ reference_id: string; name: string }>;
  /** The groups it is directly inside. */
  member_of: Array<{ reference_id: string; name: string }>;
}

const view = (g: GroupSummary): GroupView => ({
  reference_id: g.reference_id,
  name: g.name,
  system_role: g.system_role,
  owner: g.owner_email,
  permission: g.permission,
  member_count: g.members,
  all_member_count: g.all_members,
  created_at: new Date(g.created_at).toISOString(),
});

export async function listGroupViews(s: Services, managedOnly = false): Promise<GroupView[]> {
  return (await listGroups(s.store.root, managedOnly)).map(view);
}

export async function showGroup(s: Services, nameOrId: string): Promise<GroupDetail> {
  const group = await resolveGroup(s.store.root, nameOrId);
  const [members, all, owner, children, parents] = await Promise.all([
    membersOf(s.store.root, group.id),
    countAllMembers(s.store.root, group.id),
    group.user_account_id === null ? undefined : findAccountById(s.store.root, group.user_account_id),
    childGroups(s.store.root, group.id),
    parentGroups(s.store.root, group.id),
  ]);
  const named = (g: { reference_id: string; name: string }) => ({ reference_id: g.reference_id, name: g.name });
  return {
    ...view({ ...group, owner_email: owner?.email ?? null, members: members.length, all_members: all }),
    members: members.map((m) => ({ reference_id: m.reference_id, email: m.email, name: m.name })),
    groups: children.map(named),
    member_of: parents.map(named),
  };
}

/** The shell's permission option: the same integer the record API takes. */
export const groupPermission = (value: string | undefined) => (value === undefined ? undefined : parsePermission(value, '{--permission}'));
