/**
 * What a running server records for the shell: the public URL it runs with (links an admin
 * command queues or prints use it when the command is given none) and where its mail goes. On
 * PostgreSQL every instance must run with the same public URL; one that starts with another warns
 * `public_url_changed` and its URL is recorded (docs/operations.md).
 */
import type { Config } from '../config';
import type { Logger } from '../log';
import type { Mailer } from '../mail/mailer';
import type { Store } from '../store/connection';
import { readSetting, writeSetting } from '../store/deliveries';

const PUBLIC_URL = 'public_url';
const MAIL_ROUTE = 'mail_route';

/**
 * Records this server's public URL and mail route. `othersRunning`: another server runs on this
 * store now (SQLite knows it from the data directory's lock; null on PostgreSQL, where it is not
 * known). A second server that starts beside a running one with another public URL leaves the
 * recorded one alone: after it stops, mail and admin commands would otherwise link to it.
 */
export async function recordRunning(store: Store, config: Config, mailer: Mailer, logger: Logger, othersRunning: boolean | null): Promise<void> {
  const was = await readSetting(store.root, PUBLIC_URL);
  if (was !== null && was !== config.publicUrl) {
    if (othersRunning === true) {
      logger.warn('public_url_kept', {
        was,
        now: config.publicUrl,
        message: `another server on this store runs with ${was}: mail and admin commands keep linking there; to make ${config.publicUrl} the address, stop the other server and start this one again`,
      });
      return;
    }
    logger.warn('public_url_changed', {
      was,
      now: config.publicUrl,
      message: `mail and admin commands now link to ${config.publicUrl}${othersRunning === null ? `; every instance on one database must run with the same public URL setting (another still running with ${was} records it again when it restarts)` : ''}`,
    });
  }
  await writeSetting(store.root, PUBLIC_URL, config.publicUrl);
  await writeSetting(store.root, MAIL_ROUTE, JSON.stringify(routeOf(mailer)));
}

/** Where queued mail goes: the SMTP server or the outbox folder; `waiting` when no server has run on this store yet. */
export interface MailRoute {
  via: 'smtp' | 'outbox' | 'waiting';
  to: string;
}

const routeOf = (mailer: Mailer): MailRoute => ({ via: mailer.kind, to: mailer.destination });

/** The configuration an admin command runs with: the server's public URL unless one was given. */
export async function withServerFacts(store: Store, config: Config): Promise<Config> {
  if (config.publicUrlSet) return config;
  const url = await readSetting(store.root, PUBLIC_URL);
  return url === null ? config : Object.freeze({ ...config, publicUrl: url });
}

/** Where mail goes: this server's mailer when it is the one sending, else what the server recorded. */
export async function mailRoute(store: Store, mailer: Mailer, sending: boolean): Promise<MailRoute> {
  if (sending) return routeOf(mailer);
  const recorded = await readSetting(store.root, MAIL_ROUTE);
  return recorded === null ? { via: 'waiting', to: '' } : (JSON.parse(recorded) as MailRoute);
}
