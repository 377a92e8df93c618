/** `gatehouse migrate [status]`: opening the store migrates it; `status` only reads, and migrates nothing. */
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { assertStoreExists, readSchemaStatus } from '../core';
import { globalFlags, storeConfig, withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';
import { AppError } from '../errors';

export function registerMigrate(program: Command, io: Io): void {
  program
    .command('migrate [status]')
    .description('bring the store to the latest schema (every command does this too); "status" lists applied, pending and unknown migrations')
    .action(async (sub: string | undefined, _o, c: Command) => {
      if (sub !== undefined && sub !== 'status') throw new AppError('invalid_input', `unknown migrate subcommand ${sub}`);
      loadConfig(globalFlags(c), io.env); // validate flags before touching anything
      if (sub === 'status') {
        const config = storeConfig(c, io);
        assertStoreExists(config);
        const s = await readSchemaStatus(config);
        const doc = { schema_version: s.current, latest: s.latest, applied: s.applied, pending: s.pending, unknown: s.unknown };
        emit(io, wantsJson(c), doc, () =>
          [
            keyValues([
              ['schema version', s.current],
              ['this executable', s.latest],
            ]),
            table([
              ['MIGRATION', 'STATE'],
              ...s.applied.map((n) => [n, s.unknown.includes(n) ? 'unknown (a newer Gatehouse)' : 'applied']),
              ...s.pending.map((n) => [n, 'pending']),
            ]),
          ].join(''),
        );
        return;
      }
      await withCore(
        c,
        io,
        async (core) => {
          const status = await core.schema();
          emit(
            io,
            wantsJson(c),
            { schema_version: status.current, latest: status.latest, applied: status.applied.length, pending: status.pending.length },
            () =>
              keyValues([
                ['schema version', status.current],
                ['applied', status.applied.length],
                ['pending', status.pending.length],
              ]),
          );
        },
        { createsStore: true },
      );
    });
}
