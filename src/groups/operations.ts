/** The groups domain's operations: groups and their members from the shell, members and shares for the record API. */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { principalOf, requireAdministrator } from '../access/caller';
import { findAccountByEmail } from '../accounts/lifecycle';
import { AccountView, viewAccount } from '../accounts/views';
import { changeMembers, listMembers, MemberChange } from './members';
import { createGroup, deleteGroup, GroupDetail, GroupView, groupPermission, parseGroupName, resolveGroup, showGroup, listGroupViews } from './manage';

export interface GroupOperations {
  list(actor: Actor): Promise<GroupView[]>;
  /** The managed groups (made from the shell or by administrators): the ones that can grant access. */
  managed(actor: Actor): Promise<GroupView[]>;
  /** A group by name or reference_id, with its members. */
  show(actor: Actor, group: string): Promise<GroupDetail>;
  /** `owner`: an account's email (its owner bits apply); `permission` as the record API takes it. */
  create(actor: Actor, input: { name: string; owner?: string; permission?: string }): Promise<GroupDetail>;
  remove(actor: Actor, group: string): Promise<GroupView>;
  /** The shell's add/remove: by group name (or id) and email. */
  changeMember(actor: Actor, group: string, email: string, change: MemberChange): Promise<{ group: GroupView; account: AccountView; changed: boolean }>;
  /** The members' reference_ids (read on the group). */
  members(caller: Caller, groupId: string): Promise<string[]>;
  /** The record API's add/remove, by reference_ids (update on the group, refer on memberships). */
  changeMembers(actor: Actor, groupId: string, accountIds: readonly string[], change: MemberChange): Promise<void>;
}

export function groupOperations(s: Services): GroupOperations {
  return {
    async list(actor) {
      requireAdministrator(actor, 'list every group');
      return listGroupViews(s);
    },
    async managed(actor) {
      requireAdministrator(actor, 'list groups');
      return listGroupViews(s, true);
    },
    async show(actor, group) {
      requireAdministrator(actor, 'read every group');
      return showGroup(s, group);
    },
    async create(actor, input) {
      requireAdministrator(actor, 'create groups from here');
      const name = parseGroupName(input.name);
      const ownerId = input.owner === undefined ? null : (await findAccountByEmail(s, input.owner)).id;
      const group = await createGroup(s, actor, { name, ownerId, permission: groupPermission(input.permission) });
      return showGroup(s, group.reference_id);
    },
    async remove(actor, group) {
      requireAdministrator(actor, 'delete groups from here');
      const found = await showGroup(s, group);
      await deleteGroup(s, actor, found.reference_id);
      return found;
    },
    async changeMember(actor, group, email, change) {
      requireAdministrator(actor, 'change groups from here');
      const [found, account] = await Promise.all([resolveGroup(s.store.root, group), findAccountByEmail(s, email)]);
      const r = await changeMembers(s, actor, found.reference_id, [account.reference_id], change);
      const { members: _members, ...summary } = await showGroup(s, found.reference_id);
      return { group: summary, account: await viewAccount(s, account), changed: r.changed.length > 0 };
    },
    members: async (caller, groupId) => (await listMembers(s, await principalOf(s, caller), groupId)).map((m) => m.reference_id),
    async changeMembers(actor, groupId, accountIds, change) {
      await changeMembers(s, actor, groupId, accountIds, change);
    },
  };
}
