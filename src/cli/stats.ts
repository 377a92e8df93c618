/** `gatehouse stats`: what the store holds, whether guest signup is open and what closes it. */
import type { Command } from 'commander';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues } from './output';

export function registerStats(program: Command, io: Io): void {
  program
    .command('stats')
    .description('accounts, groups, guest signup state, schema version and store size')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const s = await core.stats(core.shell);
        emit(io, wantsJson(c), s, () =>
          keyValues([
            ['accounts', s.accounts],
            ['administrators', s.administrators],
            ['groups', s.groups],
            ['with TOTP', s.with_totp],
            ['with passkeys', s.with_passkeys],
            ['without password', s.without_password],
            ['unverified', s.unverified],
            ['disabled', s.disabled],
            ['locked', s.locked],
            // Made here always; another origin once someone came from it.
            [
              'by origin',
              Object.entries(s.by_origin)
                .flatMap(([origin, n]) => (origin === 'local' || n > 0 ? [`${origin} ${n}`] : []))
                .join(', '),
            ],
            ['guest signup', s.signup.open ? 'open' : `closed (by ${s.signup.closed_by})`],
            ['store', `${s.store.dialect} ${s.store.location}`],
            ['store size', `${(s.store.bytes / 1024).toFixed(0)} KiB`],
            ['schema version', `${s.store.schema_version}${s.store.schema_version === s.store.schema_latest ? '' : ` (latest ${s.store.schema_latest})`}`],
          ]),
        );
      }),
    );
}
