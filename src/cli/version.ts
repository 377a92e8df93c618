/** `gatehouse version [--json]`: what this executable is, for a bug report and after an upgrade. */
import type { Command } from 'commander';
import { BUILD, engineVersions, VERSION } from '../core';
import { wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues } from './output';

export async function versionFacts() {
  const engines = await engineVersions();
  return { version: VERSION, commit: BUILD.commit, built: BUILD.built, node: process.versions.node, sqlite: engines.sqlite, schema: engines.schema };
}

export function registerVersion(program: Command, io: Io): void {
  program
    .command('version')
    .description('this executable: version, commit, build time, Node, SQLite and the store schema it writes')
    .action(async (_o, c: Command) => {
      const v = await versionFacts();
      emit(io, wantsJson(c), v, () =>
        keyValues([
          ['gatehouse', v.version],
          ['commit', v.commit ?? 'none (run from the source tree)'],
          ['built', v.built ?? 'none (run from the source tree)'],
          ['node', v.node],
          ['sqlite', v.sqlite],
          ['store schema', v.schema],
        ]),
      );
    });
}
