/** `gatehouse keys list | rotate [--alg RS256|ES256] | retire <kid>`: the keys that sign and verify tokens. */
import type { Command } from 'commander';
import type { KeyView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, table } from './output';

const keyTable = (keys: KeyView[]) =>
  table([['KID', 'ALG', 'STATE', 'CREATED', 'VERIFIES UNTIL'], ...keys.map((k) => [k.kid, k.alg, k.state, k.created_at, k.verify_until ?? '-'])]);

export function registerKeys(program: Command, io: Io): void {
  const keys = program.command('keys').description('the keys that sign access tokens (their public halves are /.well-known/jwks.json)');

  keys
    .command('list')
    .description('every key: the one signing, those still verifying, those retired')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const list = await core.keys.list(core.shell);
        emit(io, wantsJson(c), { keys: list }, () => keyTable(list));
      }),
    );

  keys
    .command('rotate')
    .description('sign with a new key from the next token on; the old one verifies until its tokens expired')
    .option('--alg <alg>', 'RS256 (RSA 2048) or ES256 (P-256)', 'RS256')
    .action(async (opts: { alg: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.keys.rotate(core.shell, opts.alg);
        emit(
          io,
          wantsJson(c),
          r,
          () => `${r.kid} (${r.alg}) signs from now on${r.retired.length ? `; ${r.retired.join(', ')} verifies until its tokens expired` : ''}\n`,
        );
      }),
    );

  keys
    .command('retire <kid>')
    .description('refuse the tokens of a key that no longer signs, at once (a leaked key)')
    .action(async (kid: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const key = await core.keys.retire(core.shell, kid);
        emit(io, wantsJson(c), { key }, () => `${key.kid}: retired; its tokens are refused\n`);
      }),
    );
}
