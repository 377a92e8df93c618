/** `gatehouse app add | list | show | remove`: apps behind reverse proxies (forward authentication). */
import type { Command } from 'commander';
import type { AppView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];
const groupNames = (a: AppView) => a.allowed_groups.map((g) => g.name ?? `${g.reference_id} (deleted: nobody passes)`);

const showApp = (a: AppView) =>
  keyValues([
    ['id', a.reference_id],
    ['host', a.host],
    ['paths', a.paths.join(' ') || 'every path'],
    ['allowed groups', groupNames(a).join(', ') || 'every signed-in account'],
    ['two-factor', a.two_factor ? 'required' : 'no'],
    ['bypass paths', a.bypass_paths.join(' ') || null],
    ['created', a.created_at],
  ]);

export function registerApp(program: Command, io: Io): void {
  const app = program.command('app').description('apps behind a reverse proxy that asks Gatehouse about every request (forward authentication)');

  app
    .command('add')
    .description('protect a host (or some of its paths); a host with no app is refused')
    .requiredOption('--host <host>', 'the host name the proxy serves, like grafana.example.com')
    .option('--path <prefix>', 'cover only this path prefix of the host (repeatable; default: every path)', collect)
    .option('--allow-group <group>', 'only members of this group may pass (repeatable; default: every signed-in account)', collect)
    .option('--two-factor', 'admit only sessions that passed a second factor')
    .option('--bypass-path <prefix>', 'let everyone through under this prefix, signed in or not (repeatable)', collect)
    .action(async (opts: { host: string; path?: string[]; allowGroup?: string[]; twoFactor?: boolean; bypassPath?: string[] }, c: Command) =>
      withCore(c, io, async (core) => {
        const added = await core.apps.add(core.shell, {
          host: opts.host,
          paths: opts.path,
          allowedGroups: opts.allowGroup,
          twoFactor: opts.twoFactor,
          bypassPaths: opts.bypassPath,
        });
        emit(io, wantsJson(c), added, () => showApp(added));
      }),
    );

  app
    .command('list')
    .description('every protected app')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const apps = await core.apps.list(core.shell);
        emit(io, wantsJson(c), { apps }, () =>
          table([
            ['ID', 'HOST', 'PATHS', 'ALLOWED GROUPS', 'TWO-FACTOR'],
            ...apps.map((a) => [a.reference_id, a.host, a.paths.join(' ') || '*', groupNames(a).join(',') || '-', a.two_factor ? 'yes' : 'no']),
          ]),
        );
      }),
    );

  app
    .command('show <app>')
    .description('one app, by id (or by host when the host has one app)')
    .action(async (ref: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const view = await core.apps.show(core.shell, ref);
        emit(io, wantsJson(c), view, () => showApp(view));
      }),
    );

  app
    .command('remove <app>')
    .description('stop protecting: every request to it is refused from the next one on (deny by default)')
    .action(async (ref: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const removed = await core.apps.remove(core.shell, ref);
        emit(
          io,
          wantsJson(c),
          { removed },
          () => `removed ${removed.host}${removed.paths.length ? ` ${removed.paths.join(' ')}` : ''} (${removed.reference_id})\n`,
        );
      }),
    );
}
