/**
 * `gatehouse user api-key add <email> --name N [--expires 90d] | list <email> | revoke <email> <id>`:
 * keys a script uses as `Authorization: Bearer gh_…` to act as the account on the HTTP API. The
 * key is printed once.
 */
import type { Command } from 'commander';
import { parseDuration } from '../config';
import type { ApiKeyView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const show = (k: ApiKeyView) =>
  keyValues([
    ['id', k.id],
    ['name', k.name],
    ['created', k.created_at],
    ['expires', k.expires_at ?? 'never (until revoked)'],
    ['last used', k.last_used_at],
  ]);

export function registerApiKeys(user: Command, io: Io): void {
  const keys = user.command('api-key').description('keys a script acts as an account with on the HTTP API (Authorization: Bearer gh_…)');

  keys
    .command('add <email>')
    .description('make one; it is printed once')
    .requiredOption('--name <name>', 'which script it is for, as the lists show it')
    .option('--expires <duration>', 'how long it lasts (90d, 12h; at most 5 years); without it, until revoked')
    .action(async (email: string, o: { name: string; expires?: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const expiresInSeconds = o.expires === undefined ? null : parseDuration(o.expires, '--expires');
        const r = await core.accounts.apiKeys.add(core.shell, email, { name: o.name, expiresInSeconds });
        emit(
          io,
          wantsJson(c),
          { api_key: r.apiKey, key: r.key },
          () => `${show(r.apiKey)}key:            ${r.key}\n\nShown this once: store it where the script reads it (an environment variable, a secret store).\n`,
        );
      }),
    );

  keys
    .command('list <email>')
    .description("the account's API keys (never the keys themselves)")
    .action(async (email: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.accounts.apiKeys.list(core.shell, email);
        emit(io, wantsJson(c), { email, api_keys: list }, () =>
          list.length === 0
            ? 'no API keys\n'
            : table([
                ['ID', 'NAME', 'CREATED', 'EXPIRES', 'LAST USED'],
                ...list.map((k) => [k.id, k.name, k.created_at, k.expires_at ?? 'never', k.last_used_at ?? 'never']),
              ]),
        );
      }),
    );

  keys
    .command('revoke <email> <id>')
    .description('revoke one: a script using it is refused from its next request')
    .action(async (email: string, id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        await core.accounts.apiKeys.revoke(core.shell, email, id);
        emit(io, wantsJson(c), { email, revoked: id }, () => `revoked ${id}\n`);
      }),
    );
}
