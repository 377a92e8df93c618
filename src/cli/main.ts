/** The command line: one program, every command opening the same core as `serve`. */
import { Command, CommanderError, Option } from 'commander';
import { isAppError } from '../errors';
import { errorLine } from './output';
import { Config, loadConfig, settingOptions } from '../config';
import { registerAction } from './action';
import { registerAudit } from './audit';
import { registerBackup } from './backup';
import { registerBootstrapAdmin } from './bootstrap-admin';
import { registerGroup } from './group';
import { registerImport } from './import';
import { registerConfig } from './config';
import { registerKeys } from './keys';
import { registerClient } from './client';
import { registerApp } from './app';
import { registerProvider } from './provider';
import { registerSource } from './source';
import { registerSaml } from './saml';
import { registerScim } from './scim';
import { globalFlags } from './context';
import { EXIT, EXIT_CODE, ExitWith } from './exit-codes';
import { Io, processIo } from './io';
import { registerMigrate } from './migrate';
import { registerMigrateStore } from './migrate-store';
import { registerStats } from './stats';
import { registerUser } from './user';
import { registerWebhook } from './webhook';
import { registerVersion } from './version';
import { VERSION } from '../core';

/** The front ends the shell can start: `serve` runs the HTTP server (wired in by bin/, so the CLI never imports it). */
export interface Servers {
  serve(config: Config): Promise<void>;
}

/** The settings of one scope as commander options, from their one declaration in config.ts. */
function addSettings(cmd: Command, scope: 'global' | 'serve'): void {
  for (const o of settingOptions(scope)) {
    const option = new Option(o.flags, o.description);
    if (o.repeatable) option.argParser((value: string, previous?: string[]) => [...(previous ?? []), value]);
    cmd.addOption(option);
  }
}

export function buildProgram(io: Io, servers: Servers): Command {
  const program = new Command('gatehouse')
    .description('Self-hosted account and access server')
    .version(VERSION, '--version')
    // Usage errors are reported by run() in Gatehouse's one-line form (JSON under --json).
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => {} })
    // Every command's --help lists --data-dir, --db and --json too (they go before or after it).
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  addSettings(program, 'global');
  program.option('--json', 'print one JSON document');

  const serve = program.command('serve').description('run the HTTP server');
  addSettings(serve, 'serve');
  serve.action(async (_opts, cmd: Command) => {
    const flags = globalFlags(cmd);
    // commander gives a --no-x option the default true; only pass what was given, so the
    // environment still counts.
    for (const o of settingOptions('serve')) if (cmd.getOptionValueSource(o.key) === 'default') delete flags[o.key];
    await servers.serve(loadConfig(flags, io.env));
  });

  registerBootstrapAdmin(program, io);
  registerAction(program, io);
  registerStats(program, io);
  registerUser(program, io);
  registerGroup(program, io);
  registerImport(program, io);
  registerConfig(program, io);
  registerKeys(program, io);
  registerClient(program, io);
  registerApp(program, io);
  registerProvider(program, io);
  registerSource(program, io);
  registerSaml(program, io);
  registerScim(program, io);
  registerWebhook(program, io);
  registerMigrate(program, io);
  registerAudit(program, io);
  registerMigrateStore(program, io);
  registerBackup(program, io);
  registerVersion(program, io);
  return program;
}

/** A system error (listening, mostly) in words that name what to change. */
function systemMessage(e: NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string }): string {
  const where = e?.port !== undefined ? `${e.address ?? ''}:${e.port}` : '';
  switch (e?.code) {
    case 'EADDRINUSE':
      return `another program already listens on ${where}: stop it, or choose another --port`;
    case 'EADDRNOTAVAIL':
      return `${e.address ?? 'that address'} is not an address of this machine: --host takes one of its own (127.0.0.1, or 0.0.0.0 for every one)`;
    case 'EACCES':
      return where ? `listening on ${where} needs privileges (ports below 1024): choose --port 1024 or above` : 'permission denied';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${e.hostname ?? ''} does not resolve: --host takes an address of this machine`;
    default:
      return 'unexpected error';
  }
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it in-process. */
export async function run(argv: string[], servers: Servers, io: Io = processIo): Promise<number> {
  const program = buildProgram(io, servers);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (thrown) {
    if (thrown instanceof ExitWith) return thrown.code;
    const json = program.opts().json === true || argv.includes('--json');
    if (thrown instanceof CommanderError) {
      if (thrown.exitCode === 0) return EXIT.ok; // --help, --version
      // `gatehouse` or `gatehouse user` alone: commander has printed the help; a usage error, no message.
      if (thrown.code === 'commander.help') return EXIT.usage;
      // "error: unknown option '--bogus'" → "gatehouse: unknown option '--bogus' (see gatehouse --help)"
      const passwordArgument = thrown.code === 'commander.unknownOption' && /'--password(=[^']*)?'/.test(thrown.message);
      // An id from an older store or an authenticator (a passkey's) may begin with a dash.
      const dashedArgument = thrown.code === 'commander.unknownOption' && /'-[^-']{3,}'/.test(thrown.message);
      const message = passwordArgument
        ? 'a password is never an argument (ps and shell history would show it): use --password-stdin, --password-file <file> or --password-env <var>'
        : dashedArgument
          ? `${thrown.message.replace(/^error: /, '')}: an argument that begins with '-' goes after '--' (gatehouse keys retire -- -Xy…)`
          : `${thrown.message.replace(/^error: /, '')} (see gatehouse --help)`;
      io.err(json ? JSON.stringify({ error: { code: 'invalid_input', message } }) + '\n' : `gatehouse: ${message}\n`);
      return EXIT.usage;
    }
    if (isAppError(thrown)) {
      io.err(errorLine(thrown, json));
      return EXIT_CODE[thrown.code];
    }
    const e = thrown as NodeJS.ErrnoException;
    const message = systemMessage(e);
    io.err(json ? JSON.stringify({ error: { code: e?.code ?? 'internal', message } }) + '\n' : `gatehouse: ${message}${e?.code ? ` (${e.code})` : ''}\n`);
    return EXIT.failure;
  }
}
