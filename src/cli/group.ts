/**
 * `gatehouse group list | show <group> | create <name> | delete <group> | add <group> <email> |
 * remove <group> <email> | add-group <parent> <child> | remove-group <parent> <child>`
 */
import type { Command } from 'commander';
import { describePermission, type GroupDetail, type GroupView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const showGroup = (g: GroupDetail) =>
  keyValues([
    ['name', g.name],
    ['reference_id', g.reference_id],
    ['system role', g.system_role],
    ['owner', g.owner],
    ['permission', `${g.permission} (${describePermission(g.permission)})`],
    ['created', g.created_at],
    ['groups inside', g.groups.map((x) => x.name).join(', ') || '-'],
    ['inside of', g.member_of.map((x) => x.name).join(', ') || '-'],
    ['members', g.member_count],
  ]) + g.members.map((m) => `  ${m.email}  ${m.name}\n`).join('');

export function registerGroup(program: Command, io: Io): void {
  const group = program.command('group').description('manage groups and their members (a group is named by its name or its reference_id)');

  group
    .command('list')
    .description('every group, with its owner and how many members it has')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const groups = await core.groups.list(core.shell);
        emit(io, wantsJson(c), { groups }, () =>
          table([
            ['NAME', 'REFERENCE_ID', 'ROLE', 'OWNER', 'MEMBERS', 'PERMISSION'],
            ...groups.map((g: GroupView) => [g.name, g.reference_id, g.system_role ?? '-', g.owner ?? '-', String(g.member_count), String(g.permission)]),
          ]),
        );
      }),
    );

  group
    .command('show <group>')
    .description('one group and its members')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const g = await core.groups.show(core.shell, name);
        emit(io, wantsJson(c), g, () => showGroup(g));
      }),
    );

  group
    .command('create <name>')
    .description('create a group (names are unique when made here)')
    .option('--owner <email>', 'the owning account (its owner bits apply); default: none, only administrators manage it')
    .option('--permission <n>', "the group row's permission (default: the usergroup table's default permission)")
    .action(async (name: string, opts: { owner?: string; permission?: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const g = await core.groups.create(core.shell, { name, owner: opts.owner, permission: opts.permission });
        emit(io, wantsJson(c), g, () => showGroup(g));
      }),
    );

  group
    .command('delete <group>')
    .description('delete a group; its members leave it and what was shared with it is no longer (system groups stay)')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const g = await core.groups.remove(core.shell, name);
        emit(io, wantsJson(c), { group: { reference_id: g.reference_id, name: g.name }, deleted: true }, () => `${g.name}: deleted\n`);
      }),
    );

  for (const [command, change, description] of [
    ['add', 'add', 'add an account to a group (to administrators: promote)'],
    ['remove', 'remove', 'take an account out of a group (never the last administrator)'],
  ] as const) {
    group
      .command(`${command} <group> <email>`)
      .description(description)
      .action(async (name: string, email: string, _o, c: Command) =>
        withCore(c, io, async (core) => {
          const r = await core.groups.changeMember(core.shell, name, email, change);
          const doc = {
            group: { reference_id: r.group.reference_id, name: r.group.name },
            account: { reference_id: r.account.reference_id, email: r.account.email },
            changed: r.changed,
          };
          const text = r.changed
            ? `${r.account.email}: ${change === 'add' ? 'added to' : 'removed from'} ${r.group.name}`
            : `${r.account.email}: ${change === 'add' ? 'already in' : 'not in'} ${r.group.name}; nothing changed`;
          emit(io, wantsJson(c), doc, () => text + '\n');
        }),
      );
  }

  for (const [command, change, description] of [
    ['add-group', 'add', 'put a group inside another: its members become members of <parent> too'],
    ['remove-group', 'remove', 'take a group out of another'],
  ] as const) {
    group
      .command(`${command} <parent> <child>`)
      .description(description)
      .action(async (parent: string, child: string, _o, c: Command) =>
        withCore(c, io, async (core) => {
          const r = await core.groups.changeGroup(core.shell, parent, child, change);
          const doc = {
            group: { reference_id: r.group.reference_id, name: r.group.name },
            child: { reference_id: r.child.reference_id, name: r.child.name },
            changed: r.changed,
          };
          const text = r.changed
            ? `${r.child.name}: ${change === 'add' ? 'put inside' : 'taken out of'} ${r.group.name}`
            : `${r.child.name}: ${change === 'add' ? 'already inside' : 'not inside'} ${r.group.name}; nothing changed`;
          emit(io, wantsJson(c), doc, () => text + '\n');
        }),
      );
  }
}
