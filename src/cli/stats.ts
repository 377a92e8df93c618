/** `gatehouse stats`: what the store holds, whether guest signup is open and what closes it. */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Core } from '../core';
import { signupStatus } from '../accounts/signup-status';
import { schemaVersion, SQLITE_FILE } from '../store/connection';
import { accountStats } from '../stats';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues } from './output';

async function storeBytes(core: Core): Promise<number> {
  if (core.store.dialect === 'postgres') {
    const r = await core.store.knex.raw('select pg_database_size(current_database()) as size');
    return Number(r.rows[0].size);
  }
  const base = path.join(core.config.dataDir, SQLITE_FILE);
  return ['', '-wal', '-shm'].reduce((sum, suffix) => {
    try {
      return sum + fs.statSync(base + suffix).size;
    } catch {
      return sum;
    }
  }, 0);
}

export async function collectStats(core: Core) {
  const db = core.store.knex;
  const [accounts, signup, version, bytes, groups] = await Promise.all([
    accountStats(core),
    signupStatus(db),
    schemaVersion(db),
    storeBytes(core),
    db('usergroup').count({ n: '*' }).first(),
  ]);
  return {
    accounts: accounts.total,
    administrators: accounts.administrators,
    groups: Number(groups?.n ?? 0),
    totp_enabled: accounts.with_totp,
    unverified: accounts.unverified,
    disabled: accounts.disabled,
    locked: accounts.locked,
    signup: { open: signup.open, closed_by: signup.closedBy },
    store: { dialect: core.store.dialect, location: core.store.location, bytes, schema_version: version.current, schema_latest: version.latest },
  };
}

export function registerStats(program: Command, io: Io): void {
  program
    .command('stats')
    .description('accounts, groups, guest signup state, schema version and store size')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const s = await collectStats(core);
        emit(io, wantsJson(c), s, () =>
          keyValues([
            ['accounts', s.accounts],
            ['administrators', s.administrators],
            ['groups', s.groups],
            ['TOTP enabled', s.totp_enabled],
            ['unverified', s.unverified],
            ['disabled', s.disabled],
            ['locked', s.locked],
            ['guest signup', s.signup.open ? 'open' : `closed (by ${s.signup.closed_by})`],
            ['store', `${s.store.dialect} ${s.store.location}`],
            ['store size', `${(s.store.bytes / 1024).toFixed(0)} KiB`],
            ['schema version', `${s.store.schema_version}${s.store.schema_version === s.store.schema_latest ? '' : ` (latest ${s.store.schema_latest})`}`],
          ]),
        );
      }),
    );
}
