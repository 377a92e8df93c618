/** `gatehouse migrate [status]`: opening the store migrates it; `status` only reports. */
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { globalFlags, withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues } from './output';
import { AppError } from '../errors';

export function registerMigrate(program: Command, io: Io): void {
  program
    .command('migrate [status]')
    .description('bring the store to the latest schema (every command does this too); "status" reports it')
    .action(async (sub: string | undefined, _o, c: Command) => {
      if (sub !== undefined && sub !== 'status') throw new AppError('invalid_input', `unknown migrate subcommand ${sub}`);
      loadConfig(globalFlags(c), io.env); // validate flags before touching anything
      await withCore(
        c,
        io,
        async (core) => {
          const status = await core.schema();
          const doc = { current: status.current, latest: status.latest, completed: status.completed, pending: status.pending };
          emit(io, wantsJson(c), doc, () =>
            keyValues([
              ['schema version', doc.current],
              ['latest', doc.latest],
              ['applied', doc.completed.length],
              ['pending', doc.pending.length],
            ]),
          );
        },
        { createsStore: true },
      );
    });
}
