/** The groups domain's operations: groups and their members from the shell, members and shares for the record API. */
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { principalOf, requireAdministrator } from '../access/caller';
import { findAccountByEmail } from '../accounts/lifecycle';
import { AccountView, viewAccount } from '../accounts/views';
import { changeMembers, listMembers, MemberChange, readableGroup } from './members';
import { changeNesting } from './nesting';
import { childGroups } from '../store/nesting';
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
  /** The shell's and the console's add-group/remove-group: a group (by name or id) put inside another, or taken out. */
  changeGroup(actor: Actor, parent: string, child: string, change: MemberChange): Promise<{ group: GroupView; child: GroupView; changed: boolean }>;
  /** The reference_ids of the groups directly inside a group (read on the group). */
  memberGroups(caller: Caller, groupId: string): Promise<string[]>;
  /** The record API's add/remove of groups inside a group, by reference_ids. */
  changeMemberGroups(actor: Actor, groupId: string, childIds: readonly string[], change: MemberChange): Promise<void>;
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
      const { members: _members, groups: _groups, member_of: _memberOf, ...summary } = await showGroup(s, found.reference_id);
      return { group: summary, account: await viewAccount(s, account), changed: r.changed.length > 0 };
    },
    members: async (caller, groupId) => (await listMembers(s, await principalOf(s, caller), groupId)).map((m) => m.reference_id),
    async changeMembers(actor, groupId, accountIds, change) {
      await changeMembers(s, actor, groupId, accountIds, change);
    },
    async changeGroup(actor, parent, child, change) {
      requireAdministrator(actor, 'change groups from here');
      const [outer, inner] = await Promise.all([resolveGroup(s.store.root, parent), resolveGroup(s.store.root, child)]);
      const r = await changeNesting(s, actor, outer.reference_id, [inner.reference_id], change);
      const summary = async (reference: string) => {
        const { members: _m, groups: _g, member_of: _o, ...g } = await showGroup(s, reference);
        return g;
      };
      return { group: await summary(outer.reference_id), child: await summary(inner.reference_id), changed: r.changed.length > 0 };
    },
    async memberGroups(caller, groupId) {
      const group = await readableGroup(s.store.root, await principalOf(s, caller), groupId);
      return (await childGroups(s.store.root, group.row.id)).map((g) => g.reference_id);
    },
    async changeMemberGroups(actor, groupId, childIds, change) {
      await changeNesting(s, actor, groupId, childIds, change);
    },
  };
}
