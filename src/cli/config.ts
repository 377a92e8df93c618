/**
 * `gatehouse config schema | export [--out FILE] | plan FILE | apply FILE`: what an operator
 * configures, kept as a file. `plan` exits 0 when nothing would change, 2 when something would,
 * 1 on an error (the file's line and column and what was expected there).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AppError, isAppError } from '../errors';
import { CONFIG_SCHEMA, readConfigText } from '../core';
import type { ConfigPlan as Plan } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, errorLine } from './output';
import { ExitWith } from './exit-codes';

/** The file's text, and the name it is recorded by (its absolute path: the same from any folder). */
const readConfigFile = (file: string) => readConfigText(path.resolve(file));

/**
 * The plan as lines: its changes (or "nothing to change"), then, indented, what changes nothing:
 * objects it takes over, secrets kept as stored, objects it leaves alone.
 */
const lines = (plan: Plan) =>
  [
    ...(plan.changes.length === 0 ? ['nothing to change'] : plan.changes.map((c) => `${c.sign} ${c.kind} ${c.name}${c.detail ? `: ${c.detail}` : ''}`)),
    ...plan.notes.map((n) => `  ${n.kind} ${n.name}: ${n.text}`),
    ...plan.unmanaged.map((u) => `  ${u.kind} ${u.name}: ${u.file ? `managed by ${u.file}` : 'made by hand'}, not in the file (left alone)`),
  ].join('\n') + '\n';

/**
 * Writes `text` to `file` as a new file of mode 0600: made beside it under a name nobody else can
 * have taken (never following a link planted there), then renamed over it, so a link at `file` is
 * replaced, never followed, and a reader never sees half a file.
 */
function writeNew(file: string, text: string): void {
  const target = path.resolve(file);
  if (fs.existsSync(target) && fs.statSync(target).isDirectory()) throw new AppError('invalid_input', `--out ${file} is a folder: name a file`);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AppError(
      'invalid_input',
      `cannot write ${file}: ${code === 'ENOENT' ? 'its folder does not exist' : code === 'EACCES' ? 'permission denied' : code}`,
    );
  }
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(temp, target);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw new AppError('invalid_input', `cannot write ${file}: ${(err as NodeJS.ErrnoException).code}`);
  }
}

export function registerConfig(program: Command, io: Io): void {
  const config = program
    .command('config')
    .description(
      'keep what an operator configures (groups, actions, clients, SAML SPs, apps, providers, webhooks, SCIM targets) in a YAML file: export, plan, apply',
    );

  config
    .command('schema')
    .description("print the file's JSON Schema (for editors)")
    // Needs no store: an editor's setup runs it anywhere.
    .action(async () => {
      io.out(JSON.stringify(CONFIG_SCHEMA, null, 2) + '\n');
    });

  config
    .command('export')
    .description('write the configuration as YAML (to standard output, or --out FILE)')
    .option('--out <file>', 'write it to this file (mode 0600) instead')
    .action(async (o: { out?: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const text = await core.configFile.export(core.shell);
        if (o.out === undefined) return io.out(wantsJson(c) ? JSON.stringify({ yaml: text }) + '\n' : text);
        writeNew(o.out, text);
        emit(io, wantsJson(c), { written: path.resolve(o.out) }, () => `wrote ${o.out}\n`);
      }),
    );

  config
    .command('plan <file>')
    .description('what apply would change, one line each (+ create, ~ change, - delete); exit 0: nothing, 2: changes, 1: an error')
    .action(async (file: string, _o, c: Command) => {
      let plan: Plan;
      try {
        plan = await withCore(c, io, (core) => core.configFile.plan(core.shell, readConfigFile(file), path.resolve(file), io.env));
      } catch (err) {
        if (!isAppError(err)) throw err;
        io.err(errorLine(err, wantsJson(c)));
        throw new ExitWith(1);
      }
      emit(io, wantsJson(c), plan, () => lines(plan));
      if (plan.changes.length > 0) throw new ExitWith(2);
    });

  config
    .command('apply <file>')
    .description('make the store match the file, in one transaction (deletes only what an earlier apply made)')
    .action(async (file: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const plan = await core.configFile.apply(core.shell, readConfigFile(file), path.resolve(file), io.env);
        emit(io, wantsJson(c), plan, () => lines(plan));
      }),
    );
}
