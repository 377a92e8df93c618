/** `gatehouse serve`: open the core, listen, prune periodically, stop gracefully on SIGTERM/SIGINT. */
import type { Config } from '../config';
import { claimDataDir, openCore } from '../core';
import { createLogger, Logger } from '../log';
import { startServer } from './server';

const PRUNE_EVERY_MS = 10 * 60 * 1000;

export async function serve(config: Config, logger: Logger = createLogger(undefined, config.logLevel)): Promise<void> {
  const core = await openCore(config, { logger });
  let running;
  try {
    running = await startServer(core);
  } catch (err) {
    await core.close();
    throw err;
  }
  // `gatehouse restore` refuses while this file names a live process.
  const release = claimDataDir(config);
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
  if (!(await core.filterIndexed())) {
    logger.warn('filter_unindexed', {
      message: 'pg_trgm could not be created in this database: filter= on accounts and groups reads every row (see the README, "Filters on PostgreSQL")',
    });
  }

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
