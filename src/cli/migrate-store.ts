/**
 * `gatehouse migrate-store --to <postgres://… | sqlite:<data-dir>>`: copies the store the global
 * flags name (SQLite by default) into a new, empty one, and checks every table's row count.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { AppError } from '../errors';
import { openStore } from '../store/connection';
import { copyStore } from '../store/copy';
import { globalFlags, wantsJson } from './context';
import type { Io } from './io';
import { emit, table } from './output';

export function registerMigrateStore(program: Command, io: Io): void {
  program
    .command('migrate-store')
    .description('copy every account, group, permission and secret into a new, empty store (e.g. SQLite to PostgreSQL)')
    .requiredOption('--to <store>', 'postgres://user@host:port/db, or sqlite:<data-dir>')
    .action(async (opts: { to: string }, c: Command) => {
      const { dataDir, db } = globalFlags(c);
      const source = loadConfig({ dataDir, db }, io.env);
      const target = opts.to.startsWith('sqlite:')
        ? loadConfig({ dataDir: opts.to.slice('sqlite:'.length), db: '' }, {})
        : loadConfig({ dataDir: source.dataDir, db: opts.to }, {});
      if (target.db === source.db && target.dataDir === source.dataDir) throw new AppError('invalid_input', '--to names the store being copied');
      const from = await openStore(source);
      try {
        const to = await openStore(target);
        try {
          const report = await copyStore(from, to);
          emit(io, wantsJson(c), { from: from.location, to: to.location, tables: report.tables }, () =>
            `copied ${from.location} -> ${to.location}\n` + table([['TABLE', 'ROWS'], ...report.tables.map((t) => [t.table, String(t.target)])]),
          );
        } finally {
          await to.close();
        }
      } finally {
        await from.close();
      }
    });
}
