/** The command line: one program, every command opening the same core as `serve`. */
import { Command, CommanderError, Option } from 'commander';
import { isAppError } from '../errors';
import { Config, loadConfig } from '../config';
import { registerAction } from './action';
import { registerAudit } from './audit';
import { registerBackup } from './backup';
import { registerBootstrapAdmin } from './bootstrap-admin';
import { registerGroup } from './group';
import { registerKeys } from './keys';
import { registerClient } from './client';
import { globalFlags } from './context';
import { EXIT, EXIT_CODE } from './exit-codes';
import { Io, processIo } from './io';
import { registerMigrate } from './migrate';
import { registerMigrateStore } from './migrate-store';
import { registerStats } from './stats';
import { registerUser } from './user';

export const VERSION = '0.1.0';

/** The front ends the shell can start: `serve` runs the HTTP server (wired in by bin/, so the CLI never imports it). */
export interface Servers {
  serve(config: Config): Promise<void>;
}

export function buildProgram(io: Io, servers: Servers): Command {
  const program = new Command('gatehouse')
    .description('Self-hosted account and access server')
    .version(VERSION, '--version')
    .option('--data-dir <dir>', 'data directory (SQLite file, outbox) [env GATEHOUSE_DATA_DIR]')
    .option('--db <url>', 'postgres://… to use PostgreSQL instead of SQLite [env GATEHOUSE_DB, GATEHOUSE_DB_FILE]')
    .option('--json', 'print one JSON document')
    // Usage errors are reported by run() in Gatehouse's one-line form (JSON under --json).
    .configureOutput({ writeOut: io.out, writeErr: io.err, outputError: () => {} })
    // Every command's --help lists --data-dir, --db and --json too (they go before or after it).
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();

  program
    .command('serve')
    .description('run the HTTP server')
    .option('--host <host>', 'address to listen on [env GATEHOUSE_HOST] (default 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 for any free one [env GATEHOUSE_PORT] (default 6336)')
    .option('--token-ttl <duration>', 'access-token lifetime (default 1h) [env GATEHOUSE_TOKEN_TTL]')
    .option('--bcrypt-cost <n>', 'bcrypt cost for new hashes [env GATEHOUSE_BCRYPT_COST] (default 11)')
    .option('--password-min-length <n>', 'minimum password length [env GATEHOUSE_PASSWORD_MIN_LENGTH] (default 8)')
    .option('--public-url <url>', 'the address clients use, for links [env GATEHOUSE_PUBLIC_URL]')
    .option('--verify-url <template>', "your app's verification screen, e.g. https://app.example.com/verify#token={token} [env GATEHOUSE_VERIFY_URL]")
    .option('--reset-url <template>', "your app's password-reset screen, with {token} [env GATEHOUSE_RESET_URL]")
    .addOption(new Option('--no-pages', 'serve no HTML pages (/signin, /signup, /account, …) [env GATEHOUSE_PAGES=false]'))
    .option(
      '--cors-origin <origin>',
      'a browser origin allowed to call the API, exactly (repeatable) [env GATEHOUSE_CORS_ORIGIN, comma-separated]',
      (value: string, previous?: string[]) => [...(previous ?? []), value],
    )
    .addOption(new Option('--public-statistics', 'serve /statistics to everyone [env GATEHOUSE_PUBLIC_STATISTICS]'))
    .addOption(new Option('--public-metrics', 'serve /metrics to everyone [env GATEHOUSE_PUBLIC_METRICS]'))
    .option('--metrics-token-file <file>', 'a file holding a bearer token that may read /metrics [env GATEHOUSE_METRICS_TOKEN_FILE]')
    .option('--log-level <level>', 'debug, info (default), warn, error or silent [env GATEHOUSE_LOG_LEVEL]')
    .option(
      '--trust-proxy [hops|networks]',
      'behind reverse proxies: how many (default 1), or their networks like 10.0.0.0/8,127.0.0.1; the client address is the first untrusted one from the right of X-Forwarded-For [env GATEHOUSE_TRUST_PROXY]',
    )
    .addOption(new Option('--no-rate-limits', 'turn per-address limits off [env GATEHOUSE_RATE_LIMITS=false]'))
    .option('--hash-concurrency <n>', 'password hashes computed at once [env GATEHOUSE_HASH_CONCURRENCY]')
    .option('--smtp-url <url>', 'smtp(s)://user:pass@host:port; without it mail goes to <data-dir>/outbox [env GATEHOUSE_SMTP_URL, GATEHOUSE_SMTP_URL_FILE]')
    .option('--mail-from <address>', 'sender of outgoing mail [env GATEHOUSE_MAIL_FROM]')
    .addOption(new Option('--require-verified-email', 'refuse signin until the email is verified [env GATEHOUSE_REQUIRE_VERIFIED_EMAIL]'))
    .option('--verification-ttl <duration>', 'verification link lifetime (default 24h) [env GATEHOUSE_VERIFICATION_TTL]')
    .option('--reset-ttl <duration>', 'password reset link lifetime (default 30m) [env GATEHOUSE_RESET_TTL]')
    .option('--limit-window <duration>', 'window of the signin, signup and TOTP limits (default 15m) [env GATEHOUSE_LIMIT_WINDOW]')
    .option('--signin-failures-per-account <n>', 'failed signins for one account from one address before that pair locks (default 10)')
    .option(
      '--signin-failures-per-account-total <n>',
      'failed signins for one account from all addresses before signins from unfamiliar places wait longer after each failure (default 100)',
    )
    .option('--signin-failures-per-address <n>', 'failed signins per client address (default 100)')
    .option('--signups-per-address <n>', 'signup attempts per client address (default 100)')
    .option('--totp-failures-per-account <n>', 'failed codes before the second factor locks (default 5)')
    .option('--reset-requests-per-account <n>', 'password reset requests per account (default 3)')
    .option('--reset-window <duration>', 'window of the reset request limit (default 1h)')
    .action(async (_opts, cmd: Command) => {
      const flags = globalFlags(cmd);
      // commander sets rateLimits=true by default for --no-rate-limits; only pass it when given.
      if (cmd.getOptionValueSource('rateLimits') !== 'cli') delete flags.rateLimits;
      if (cmd.getOptionValueSource('pages') !== 'cli') delete flags.pages;
      await servers.serve(loadConfig(flags, io.env));
    });

  registerBootstrapAdmin(program, io);
  registerAction(program, io);
  registerStats(program, io);
  registerUser(program, io);
  registerGroup(program, io);
  registerKeys(program, io);
  registerClient(program, io);
  registerMigrate(program, io);
  registerAudit(program, io);
  registerMigrateStore(program, io);
  registerBackup(program, io);
  return program;
}

/** Runs the CLI; returns the exit code instead of exiting, so tests can call it in-process. */
export async function run(argv: string[], servers: Servers, io: Io = processIo): Promise<number> {
  const program = buildProgram(io, servers);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (thrown) {
    const json = program.opts().json === true || argv.includes('--json');
    if (thrown instanceof CommanderError) {
      if (thrown.exitCode === 0) return EXIT.ok; // --help, --version
      // `gatehouse` or `gatehouse user` alone: commander has printed the help; a usage error, no message.
      if (thrown.code === 'commander.help') return EXIT.usage;
      // "error: unknown option '--bogus'" → "gatehouse: unknown option '--bogus' (see gatehouse --help)"
      const message = `${thrown.message.replace(/^error: /, '')} (see gatehouse --help)`;
      io.err(json ? JSON.stringify({ error: { code: 'invalid_input', message } }) + '\n' : `gatehouse: ${message}\n`);
      return EXIT.usage;
    }
    if (isAppError(thrown)) {
      io.err(json ? JSON.stringify({ error: { code: thrown.code, message: thrown.message } }) + '\n' : `gatehouse: ${thrown.message}\n`);
      return EXIT_CODE[thrown.code];
    }
    const e = thrown as NodeJS.ErrnoException;
    const message = e?.code === 'EADDRINUSE' ? 'the port is already in use' : e?.code === 'EACCES' ? 'permission denied' : 'unexpected error';
    io.err(json ? JSON.stringify({ error: { code: e?.code ?? 'internal', message } }) + '\n' : `gatehouse: ${message}${e?.code ? ` (${e.code})` : ''}\n`);
    return EXIT.failure;
  }
}
