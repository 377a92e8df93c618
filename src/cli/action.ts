/** `gatehouse action list | get-permission <action> | set-permission <action> (--guest on|off | --value N)` */
import { Command, Option } from 'commander';
import { AppError } from '../errors';
import { describePermission as describe } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

export function registerAction(program: Command, io: Io): void {
  const action = program.command('action').description('list actions and change who may run them');

  action
    .command('list')
    .description('every action with its permission')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const views = await core.actions.list(core.shell);
        emit(io, wantsJson(c), { actions: views }, () =>
          table([['TYPE', 'ACTION', 'PERMISSION', 'BITS'], ...views.map((v) => [v.on_type, v.action, String(v.permission), describe(v.permission)])]),
        );
      }),
    );

  action
    .command('get-permission <action>')
    .description('the permission of one action, decoded')
    .action(async (name: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.actions.get(core.shell, name);
        emit(io, wantsJson(c), view, () =>
          keyValues([
            ['action', `${view.on_type}/${view.action}`],
            ['permission', view.permission],
            ['bits', describe(view.permission)],
            ['guest execute', view.decoded.guest.execute ? 'on' : 'off'],
          ]),
        );
      }),
    );

  action
    .command('set-permission <action>')
    .description('turn guest execute on or off, or set the whole integer')
    .addOption(new Option('--guest <state>', 'guest execute bit').choices(['on', 'off']))
    .option('--value <n>', 'the whole permission integer (0…2097151)')
    .action(async (name: string, opts: { guest?: 'on' | 'off'; value?: string }, c: Command) => {
      if ((opts.guest === undefined) === (opts.value === undefined)) {
        throw new AppError('invalid_input', 'give exactly one of --guest on|off or --value N');
      }
      await withCore(c, io, async (core) => {
        const change = opts.guest !== undefined ? { guest: opts.guest } : { value: opts.value };
        const r = await core.actions.setPermission(core.shell, name, change);
        emit(
          io,
          wantsJson(c),
          {
            action: r.after.action,
            on_type: r.after.on_type,
            before: r.before.permission,
            after: r.after.permission,
            changed: r.changed,
            decoded: r.after.decoded,
          },
          () =>
            keyValues([
              ['action', `${r.after.on_type}/${r.after.action}`],
              ['permission', r.changed ? `${r.before.permission} -> ${r.after.permission}` : `${r.after.permission} (unchanged)`],
              ['bits', describe(r.after.permission)],
              ['guest execute', r.after.decoded.guest.execute ? 'on' : 'off'],
            ]),
        );
      });
    });
}
