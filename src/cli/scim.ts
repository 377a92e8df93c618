/**
 * `gatehouse scim token add | list | revoke`: the tokens provisioning services (Entra ID, Okta)
 * present at /scim/v2; `gatehouse scim target add | list | show | remove | sync`: apps' SCIM
 * endpoints Gatehouse pushes people to.
 */
import type { Command } from 'commander';
import { AppError } from '../errors';
import type { ScimTargetView, ScimTokenView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

export function registerScim(program: Command, io: Io): void {
  const scim = program.command('scim').description('SCIM 2.0 provisioning: tokens for the services that feed /scim/v2, and apps Gatehouse pushes people to');
  const token = scim.command('token').description('tokens that open /scim/v2 (and nothing else)');

  token
    .command('add')
    .description('make a token for a provisioning service; printed once, kept as a hash')
    .requiredOption('--name <name>', 'which service holds it (entra, okta): listed, audited')
    .action(async (opts: { name: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const made = await core.scim.addToken(core.shell, opts.name);
        emit(io, wantsJson(c), made, () =>
          keyValues([
            ['token', `${made.token}   (shown once: store it now)`],
            ['name', made.name],
            ['id', made.id],
            ['SCIM base URL', `${core.config.publicUrl}/scim/v2`],
          ]),
        );
      }),
    );

  token
    .command('list')
    .description('every token, with its last use (revoked ones too)')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const tokens = await core.scim.listTokens(core.shell);
        emit(io, wantsJson(c), { tokens }, () =>
          table([
            ['ID', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'],
            ...tokens.map((x: ScimTokenView) => [x.id, x.name, x.created_at, x.last_used_at ?? 'never', x.revoked_at ?? '-']),
          ]),
        );
      }),
    );

  token
    .command('revoke <name-or-id>')
    .description('revoke a token: its next request is refused')
    .action(async (nameOrId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const revoked = await core.scim.revokeToken(core.shell, nameOrId);
        emit(io, wantsJson(c), { token: revoked, revoked: true }, () => `${revoked.name}: revoked\n`);
      }),
    );

  const target = scim.command('target').description("apps' SCIM endpoints that Gatehouse pushes people and groups to");
  const showTarget = (t: ScimTargetView) =>
    keyValues([
      ['name', t.name],
      ['id', t.id],
      ['url', t.url],
      ['groups', t.groups.length === 0 ? 'everyone' : t.groups.join(', ')],
      ['holds', `${t.users} people, ${t.group_count} groups`],
      ['pending', String(t.pending)],
      ['failed', String(t.failed)],
      ['last error', t.last_error ?? '-'],
      ['last delivered', t.last_delivered_at ?? '-'],
    ]);

  target
    .command('add')
    .description('push people (everyone, or the members of --group) and their groups to an app; syncs at once')
    .requiredOption('--url <url>', "the app's SCIM base URL (https://app.example.com/scim/v2)")
    .option('--token-stdin', "read the app's bearer token from standard input (it never appears in a process listing)")
    .option('--group <group>', 'push only the members of this group (and the group); repeatable', (v: string, all: string[] = []) => [...all, v])
    .option('--name <name>', 'what it is called here (default: the URL host)')
    .action(async (opts: { url: string; tokenStdin?: boolean; group?: string[]; name?: string }, c: Command) => {
      if (!opts.tokenStdin) throw new AppError('invalid_input', "give the app's token on standard input with --token-stdin");
      const token = (await io.readStdin()).replace(/\r?\n$/, '');
      await withCore(c, io, async (core) => {
        const r = await core.scim.addTarget(core.shell, { url: opts.url, token, groups: opts.group, name: opts.name });
        emit(
          io,
          wantsJson(c),
          r,
          () => showTarget(r.target) + `queued ${r.queued} messages: the running server pushes them (gatehouse deliveries lists what is pending)\n`,
        );
      });
    });

  target
    .command('list')
    .description('every push target, what it holds and its queue')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const targets = await core.scim.listTargets(core.shell);
        emit(io, wantsJson(c), { targets }, () =>
          table([
            ['NAME', 'URL', 'GROUPS', 'PEOPLE', 'PENDING', 'FAILED', 'LAST ERROR'],
            ...targets.map((t) => [t.name, t.url, t.groups.join(',') || 'everyone', String(t.users), String(t.pending), String(t.failed), t.last_error ?? '-']),
          ]),
        );
      }),
    );

  target
    .command('show <name-or-id>')
    .description('one push target')
    .action(async (nameOrId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const t = await core.scim.showTarget(core.shell, nameOrId);
        emit(io, wantsJson(c), t, () => showTarget(t));
      }),
    );

  target
    .command('remove <name-or-id>')
    .description('stop pushing to an app (what it holds stays there); its queued messages go')
    .action(async (nameOrId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const t = await core.scim.removeTarget(core.shell, nameOrId);
        emit(io, wantsJson(c), { target: t, removed: true }, () => `${t.name}: removed\n`);
      }),
    );

  target
    .command('sync <name-or-id>')
    .description('make the app hold exactly who it should: every person and group, matched there by externalId')
    .action(async (nameOrId: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.scim.syncTarget(core.shell, nameOrId);
        emit(io, wantsJson(c), r, () => `${r.target.name}: queued ${r.queued} messages\n`);
      }),
    );
}
