/** `gatehouse serve`: open the core, listen, stop gracefully on SIGTERM/SIGINT. */
import type { Config } from '../config';
import { openCore } from '../core';
import { createLogger, Logger } from '../log';
import { startServer } from '../http/server';
import { signupStatus } from '../accounts/signup-status';
import { prune } from '../store/counters';
import { pruneTokens } from '../store/account-tokens';

const PRUNE_EVERY_MS = 10 * 60 * 1000;
const KEEP_COUNTERS_MS = 24 * 60 * 60 * 1000;

export async function serve(config: Config, logger: Logger = createLogger()): Promise<void> {
  const core = await openCore(config, { logger, warmUp: true });
  let running;
  try {
    running = await startServer(core);
  } catch (err) {
    await core.close();
    throw err;
  }
  const signup = await signupStatus(core.store.knex);
  logger.info('listening', {
    url: running.url,
    store: core.store.location,
    dialect: core.store.dialect,
    signup_open: signup.open,
    signup_closed_by: signup.closedBy,
  });

  // Old counters (failed emails and addresses) and long-expired tokens would otherwise pile up.
  const pruner = setInterval(() => {
    Promise.all([prune(core.store.knex, KEEP_COUNTERS_MS), pruneTokens(core.store.knex)]).catch(() =>
      logger.warn('prune_failed', {}),
    );
  }, PRUNE_EVERY_MS);
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
