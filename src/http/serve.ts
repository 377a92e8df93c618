/** `gatehouse serve`: open the core, listen, prune periodically, stop gracefully on SIGTERM/SIGINT. */
import type { Config } from '../config';
import { holdDataDir, openCore, prepareDataDir } from '../core';
import { createLogger, Logger } from '../log';
import { startServer } from './server';

const PRUNE_EVERY_MS = 10 * 60 * 1000;

async function holdDataDirFor(config: Config) {
  prepareDataDir(config.dataDir);
  return holdDataDir(config.dataDir, config.busyTimeoutMs);
}

export async function serve(config: Config, logger: Logger = createLogger(undefined, config.logLevel)): Promise<void> {
  // Held for the server's life (SQLite stores): `gatehouse restore` refuses while any server holds it.
  const release = config.db ? async () => {} : await holdDataDirFor(config);
  let core;
  try {
    core = await openCore(config, { logger });
  } catch (err) {
    await release();
    throw err;
  }
  let running;
  try {
    running = await startServer(core);
  } catch (err) {
    await core.close();
    await release();
    throw err;
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

  // Old counters (failed emails and addresses) and long-expired tokens would otherwise pile up.
  const pruner = setInterval(() => core.prune().catch(() => logger.warn('prune_failed', {})), PRUNE_EVERY_MS);
  pruner.unref();

  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      clearInterval(pruner);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      logger.info('shutting_down', { signal });
      running
        .close()
        .then(() => core.close())
        .then(release)
        .then(() => {
          logger.info('stopped', {});
          resolve();
        }, resolve);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
}
