/**
 * `gatehouse backup --to FILE [--force]` and `gatehouse restore --from FILE`: checked snapshots of
 * the SQLite store (PostgreSQL has pg_dump and pg_restore for that, and the commands say so).
 */
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { backupStore, restoreStore } from '../core';
import { globalFlags, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues } from './output';

export function registerBackup(program: Command, io: Io): void {
  program
    .command('backup')
    .description('write a consistent, checked snapshot of the SQLite store (safe while a server runs)')
    .requiredOption('--to <file>', 'the snapshot file to write')
    .option('--force', 'replace the file if it exists')
    .action(async (opts: { to: string; force?: boolean }, c: Command) => {
      const { dataDir, db } = globalFlags(c);
      const facts = await backupStore(loadConfig({ dataDir, db }, io.env), opts.to, opts.force === true);
      emit(io, wantsJson(c), { file: facts.file, bytes: facts.bytes, schema_version: facts.schemaVersion, accounts: facts.accounts, integrity: 'ok' }, () =>
        keyValues([
          ['backup', facts.file],
          ['bytes', facts.bytes],
          ['schema version', facts.schemaVersion],
          ['accounts', facts.accounts],
          ['integrity', 'ok'],
        ]),
      );
    });

  program
    .command('restore')
    .description('replace the SQLite store with a snapshot, after checking it (stop the server first)')
    .requiredOption('--from <file>', 'a snapshot written by gatehouse backup')
    .action(async (opts: { from: string }, c: Command) => {
      const { dataDir, db } = globalFlags(c);
      const r = await restoreStore(loadConfig({ dataDir, db }, io.env), opts.from, new Date());
      emit(io, wantsJson(c), { from: r.file, schema_version: r.schemaVersion, accounts: r.accounts, integrity: 'ok', previous: r.previous }, () =>
        keyValues([
          ['restored from', r.file],
          ['schema version', r.schemaVersion],
          ['accounts', r.accounts],
          ['previous store kept at', r.previous],
        ]),
      );
    });
}
