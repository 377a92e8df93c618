/**
 * The one core object, built once from the configuration and handed to both front ends (the
 * HTTP server and the admin commands), so both obey the same rules.
 */
import type { Config } from './config';
import type { AuthCounters, Deps } from './deps';
import { createLogger, Logger } from './log';
import { openStore, Store } from './store/connection';
import { jwtSecret } from './store/settings';
import { PasswordHasher } from './auth/passwords';
import { TokenService } from './auth/tokens';
import { Limiter } from './auth/limits';
import { createMailer } from './mail/mailer';
import { Tasks } from './tasks';
import { Audit } from './audit';

export interface Core extends Deps {
  readonly startedAt: number;
  close(): Promise<void>;
}

export interface CoreOptions {
  logger?: Logger;
  /** Precompute the dummy hash used for unknown-email signins (servers want it; CLI not). */
  warmUp?: boolean;
}

export async function openCore(config: Config, options: CoreOptions = {}): Promise<Core> {
  const logger = options.logger ?? createLogger();
  const store: Store = await openStore(config);
  try {
    const tokens = new TokenService(await jwtSecret(store.knex), config.issuer, config.tokenTtlSeconds);
    const passwords = new PasswordHasher(config.bcryptCost, config.hashConcurrency);
    if (options.warmUp) await passwords.warmUp();
    const counters: AuthCounters = { signinsOk: 0, signinsFailed: 0, signups: 0 };
    const mailer = createMailer(config);
    const tasks = new Tasks(logger);
    return {
      config,
      store,
      passwords,
      tokens,
      logger,
      counters,
      limiter: new Limiter(store.knex, config),
      mailer,
      tasks,
      audit: new Audit(store, logger),
      startedAt: Date.now(),
      async close() {
        await tasks.drain();
        mailer.close();
        await store.close();
      },
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
