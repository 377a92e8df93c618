/** `gatehouse scim token add | list | revoke`: the tokens provisioning services (Entra ID, Okta) present at /scim/v2. */
import type { Command } from 'commander';
import type { ScimTokenView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

export function registerScim(program: Command, io: Io): void {
  const scim = program.command('scim').description('SCIM 2.0 provisioning: tokens for the services that feed /scim/v2');
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
}
