/**
 * `gatehouse serve`, the composition root: open the core once, start the front ends that listen
 * (the HTTP server; the LDAP directory when a port is given) side by side over it, prune
 * periodically, stop gracefully on SIGTERM/SIGINT. The front ends never import each other.
 */
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { passkeyObstacle, type Config } from './config';
import { holdDataDir, openCore, othersHoldDataDir, prepareDataDir, type Core } from './core';
import { createLogger, Logger } from './log';
import { parseConfig, readConfigText } from './config-file/document';
import { CONFIG, SHELL } from './actor';
import { startServer, type RunningServer } from './http/server';

const PRUNE_EVERY_MS = 10 * 60 * 1000;
/** When the heap start-up left is compacted (after the listening line). */
const SETTLE_AFTER_MS = 500;
/** How often a running server looks for directory sources whose sync is due. */
const SOURCE_TICK_MS = 15 * 1000;

/** The data directory held for the server's life, and whether another server held it already. */
async function holdDataDirFor(config: Config) {
  prepareDataDir(config.dataDir);
  const othersRunning = await othersHoldDataDir(config.dataDir);
  return { othersRunning, release: await holdDataDir(config.dataDir, config.busyTimeout) };
}

/** Applies `file` (serve --config): one line in the log of what changed, by sign. */
async function applyConfigFile(core: Core, file: string, logger: Logger): Promise<void> {
  const text = readConfigText(file);
  const plan = await core.configFile.apply(CONFIG, text, file, process.env);
  const count = (sign: string) => plan.changes.filter((c) => c.sign === sign).length;
  logger.info('config_applied', { file, created: count('+'), changed: count('~'), deleted: count('-'), unmanaged: plan.unmanaged.length });
}

/** Where a person at a terminal reads what the JSON log line says (stderr: stdout stays the log). */
export interface Terminal {
  /** True when a person is likely watching (stdout is a terminal). */
  readonly interactive: boolean;
  say(line: string): void;
}
/** An error's code for a log line (never its message: driver text may carry SQL or paths). */
const codeOf = (err: unknown): string => (err as { code?: string } | null)?.code ?? 'internal';

const processTerminal: Terminal = { interactive: process.stdout.isTTY === true, say: (line) => process.stderr.write(`${line}\n`) };

export async function serve(config: Config, logger: Logger = createLogger(undefined, config.logLevel), terminal: Terminal = processTerminal): Promise<void> {
  // A start that fails (the port taken, a wrong --host) leaves no new data directory behind.
  const madeDir = !config.db && !fs.existsSync(config.dataDir);
  const undoDir = () => {
    try {
      if (madeDir) fs.rmSync(config.dataDir, { recursive: true, force: true });
    } catch {
      // never made (its parent is not a folder): the start's own error says what is wrong
    }
  };
  // Held for the server's life (SQLite stores): `gatehouse restore` refuses while any server holds it.
  let release: () => Promise<void>;
  let othersRunning = false;
  try {
    if (config.db) release = async () => {};
    else ({ release, othersRunning } = await holdDataDirFor(config));
  } catch (err) {
    undoDir();
    throw err;
  }
  let core;
  try {
    // A configuration file that does not parse stops the start before the store is opened (or made).
    if (config.config !== null) await parseConfig(readConfigText(config.config), config.config);
    core = await openCore(config, { logger, othersRunning });
  } catch (err) {
    await release();
    undoDir();
    throw err;
  }
  if (config.posixIdBase !== null) {
    // The POSIX numbers' base, before anything listens: one that would give a number twice stops the start.
    try {
      await core.directory.posixIdBase(config.posixIdBase);
    } catch (err) {
      await core.close();
      await release();
      undoDir();
      throw err;
    }
  }
  if (config.config !== null) {
    // The configuration file, before anything listens: an invalid one stops the start.
    try {
      await applyConfigFile(core, config.config, logger);
    } catch (err) {
      await core.close();
      await release();
      undoDir();
      throw err;
    }
  }
  if (config.signinByMail) {
    // The same switch as the console's and a file's: the signin_by_mail action opened to guests (refused, and the start stopped, where a file manages it).
    try {
      const { changed } = await core.actions.setPermission(SHELL, 'signin_by_mail', { guest: 'on' });
      if (changed) logger.info('signin_by_mail_on', {});
    } catch (err) {
      await core.close();
      await release();
      undoDir();
      throw err;
    }
  }
  let running: RunningServer | undefined;
  let ldap: Awaited<ReturnType<typeof startDirectory>> = null;
  try {
    running = await startServer(core);
    ldap = await startDirectory(core, config, logger);
  } catch (err) {
    await running?.close();
    await core.close();
    await release();
    undoDir();
    throw err;
  }
  // Old counters (failed emails and addresses) and long-expired tokens would otherwise pile up.
  const pruner = setInterval(() => core.prune().catch((err: unknown) => logger.warn('prune_failed', { code: codeOf(err) })), PRUNE_EVERY_MS);
  pruner.unref();
  // Directory sources synced on their schedule (of several instances, one runs each due sync).
  let syncing: Promise<void> | null = null;
  const syncDue = () => {
    syncing ??= core.sources
      .syncDue()
      .catch((err: unknown) => logger.warn('source_schedule_failed', { code: codeOf(err) }))
      .finally(() => (syncing = null));
  };
  const syncer = setInterval(syncDue, SOURCE_TICK_MS);
  syncer.unref();
  setTimeout(syncDue, 1000).unref();

  // A shutdown that fails (the store gone while closing) is said and exits non-zero, not as a clean stop.
  // Installed before anything else is awaited: a SIGTERM right after the listening line stops cleanly.
  const stopped = new Promise<void>((resolve, reject) => {
    const stop = (signal: string) => {
      clearInterval(pruner);
      clearInterval(syncer);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      logger.info('shutting_down', { signal });
      running!
        .close()
        .then(() => ldap?.close())
        // A sync under way finishes (its transaction commits or rolls back) before the store closes.
        .then(() => syncing)
        .then(() => core.close())
        .then(release)
        .then(
          () => {
            logger.info('stopped', {});
            resolve();
          },
          (err: unknown) => {
            logger.error('stop_failed', { code: codeOf(err) });
            reject(err);
          },
        );
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  // Awaited at the end; a failed stop during the start-up lines below is not an unhandled rejection.
  stopped.catch(() => undefined);

  if (core.storeCreated) {
    // A mistyped --data-dir would otherwise quietly start an empty store, open to the first comer.
    terminal.say(`gatehouse: created a new, empty store at ${core.storeLocation}`);
  }
  const obstacle = passkeyObstacle(core.config.publicUrl);
  if (obstacle) {
    logger.warn('passkeys_unavailable', {
      message: `passkeys cannot work at ${core.config.publicUrl}: ${obstacle}; set the public URL to an https address (or http://localhost:<port> to try it)`,
    });
  }
  if (config.db && !config.publicUrlSet) {
    // Tokens name their issuer: instances that each take their own address refuse each other's.
    logger.warn('public_url_unset', {
      message: 'several instances on one PostgreSQL database must share one --public-url (the token issuer); set --public-url to the address people use',
    });
  }
  if (!(await core.filterIndexed())) {
    logger.warn('filter_unindexed', {
      message:
        'pg_trgm could not be created in this database: filter= on accounts and groups reads every row (see docs/operations.md, "Filters on PostgreSQL")',
    });
  }

  const signup = await core.signupStatus();
  logger.info('listening', {
    url: running.url,
    store: core.storeLocation,
    dialect: core.dialect,
    signup_open: signup.open,
    signup_closed_by: signup.closedBy,
    // Since the process started (Node's own start included).
    started_in_ms: Math.round(performance.now()),
  });
  settleHeapAfterStart();
  // Only for a person watching: a service's start does no more work than before.
  if (terminal.interactive || core.storeCreated) {
    terminal.say(`Gatehouse is running at ${core.config.publicUrl} (listening on ${running.url}; store ${core.storeLocation}).`);
    if (ldap) {
      const at = [ldap.port === null ? null : `ldap://${config.host}:${ldap.port}`, ldap.tlsPort === null ? null : `ldaps://${config.host}:${ldap.tlsPort}`];
      terminal.say(`The LDAP directory is at ${at.filter(Boolean).join(' and ')}, base ${ldap.baseDn} (people: uid=<username>,ou=people,${ldap.baseDn}).`);
    }
    terminal.say(
      (await core.hasAdministrator())
        ? `Sign in at ${core.config.publicUrl}/signin. Stop it with Ctrl-C.`
        : `No administrator yet: run \`gatehouse bootstrap-admin --email you@example.com --password-stdin\` in another terminal, or the first account to sign up at ${core.config.publicUrl}/signup becomes it.`,
    );
  }
  await stopped;
}

/**
 * Evaluating the bundle and opening the store grow V8's young generation to about 8 MiB (of which
 * under 1 MiB stays in use), and Node 24's V8 never gives it back to an idle server: its memory
 * reducer reports "high alloc" at 8 s and 16 s and waits again, though no scavenge runs at idle. One
 * memory-reducing full collection, half a second after the listening line, returns it and compacts
 * the old generation (anonymous RSS 34 -> 25 MiB, 1 s after the first /ping; two collections, about 50 ms, once).
 * Node has no API for it: `gc` is exposed to a throwaway context only.
 */
function settleHeapAfterStart(): void {
  setTimeout(() => {
    try {
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc') as (options: object) => void;
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } catch {
      // a runtime without the gc extension: the memory reducer returns it later, or not
    }
  }, SETTLE_AFTER_MS).unref();
}

/** The LDAP directory, when a port is given: loaded only then (it brings the BER codecs). */
async function startDirectory(core: Core, config: Config, logger: Logger) {
  if (config.ldapPort === null && config.ldapsPort === null) return null;
  // Their pairing (cert with key, --ldaps-port with both) was checked when the settings loaded.
  const tls = config.ldapTlsCert && config.ldapTlsKey ? { cert: config.ldapTlsCert, key: config.ldapTlsKey } : null;
  const { startLdap, defaultBaseDn } = await import('./ldap/server');
  const baseDn = config.ldapBaseDn || defaultBaseDn(core.config.publicUrl);
  const ldap = await startLdap(
    core,
    {
      host: config.host,
      port: config.ldapPort,
      tlsPort: config.ldapsPort,
      tls,
      baseDn,
      readers: config.ldapReaders,
      allowInsecureBind: config.ldapAllowInsecureBind,
    },
    logger,
  );
  logger.info('ldap_listening', { port: ldap.port, ldaps_port: ldap.tlsPort, base_dn: baseDn });
  return { ...ldap, close: () => ldap.close(), baseDn };
}
