/**
 * `gatehouse import --from keycloak|authelia|auth0|csv FILE [--dry-run] [--overwrite] [--allow-lookalike]`: people and
 * groups from another server's export or a spreadsheet (docs/moving-in.md). Prints one line per
 * person (created, updated, unchanged, skipped and why) and the totals; the report's text from the
 * file has had its control characters removed in the core, so a hostile cell cannot drive the terminal.
 */
import fs from 'node:fs';
import { Option, type Command } from 'commander';
import { AppError } from '../errors';
import { IMPORT_FORMATS, type ImportFormat, type ImportReport } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, table } from './output';

/** The core writes a flag as {--name}; the shell shows it as typed. */
const flagWords = (text: string) => text.replace(/\{(--[\w-]+)\}/g, '$1');

function human(r: ImportReport): string {
  const groups = r.groups.map((g) => [
    `group ${g.name}`,
    g.outcome,
    flagWords([g.nestedIn ? `inside ${g.nestedIn}` : '', g.reason ?? ''].filter(Boolean).join('; ')),
  ]);
  const people = r.people.map((p) => [p.at, p.email || '-', p.outcome, flagWords(p.reason ?? '')]);
  const rows = [...groups, ...people];
  const total = `${r.dry_run ? 'dry run, nothing written: ' : ''}${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ${r.skipped} skipped\n`;
  return (rows.length > 0 ? table(rows) : '') + total;
}

/** At most this much: 100,000 people are about 20 MB of CSV, or 100 MB of a Keycloak realm. */
const MAX_IMPORT_BYTES = 512 * 1024 * 1024;

/** A regular file, judged by what was opened (a FIFO would block, a device never end), within the cap. */
function readImportFile(file: string): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw code === 'ENOENT' ? new AppError('not_found', `no file ${file}`) : new AppError('invalid_input', `cannot read ${file} (${code ?? 'error'})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new AppError('invalid_input', `${file} is not a regular file`);
    if (stat.size > MAX_IMPORT_BYTES) throw new AppError('invalid_input', `${file} is larger than ${MAX_IMPORT_BYTES / 1048576} MiB: split it`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

export function registerImport(program: Command, io: Io): void {
  program
    .command('import')
    .description('bring people and groups from Keycloak, Authelia, Auth0 or a CSV file; their password hashes are checked at the first sign-in')
    .addOption(new Option('--from <format>', 'the file’s format').choices([...IMPORT_FORMATS]).makeOptionMandatory())
    .argument('<file>', 'the export or CSV file')
    .option('--dry-run', 'report what would happen, write nothing')
    .option('--overwrite', 'also bring the file’s name, password and groups to accounts that already exist (never administrators)')
    .option('--allow-lookalike', 'also make people whose address looks like another account’s (otherwise skipped, naming it)')
    .action(async (file: string, o: { from: ImportFormat; dryRun?: boolean; overwrite?: boolean; allowLookalike?: boolean }, c: Command) => {
      const text = readImportFile(file);
      await withCore(c, io, async (core) => {
        const report = await core.importer.run(core.shell, {
          format: o.from,
          text,
          dryRun: o.dryRun === true,
          overwrite: o.overwrite === true,
          allowLookalike: o.allowLookalike === true,
        });
        emit(io, wantsJson(c), report, () => human(report));
      });
    });
}
