/**
 * `gatehouse migrate-store --to <postgres://… | sqlite:<data-dir>>`: copies the store the global
 * flags name (SQLite by default) into a new, empty one, and checks every table's row count.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config';
import { migrateStore } from '../core';
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
      const report = await migrateStore(source, target);
      emit(
        io,
        wantsJson(c),
        { from: report.from, to: report.to, tables: report.tables },
        () => `copied ${report.from} -> ${report.to}\n` + table([['TABLE', 'ROWS'], ...report.tables.map((t) => [t.table, String(t.target)])]),
      );
    });
}
