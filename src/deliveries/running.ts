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

export async function recordRunning(store: Store, config: Config, mailer: Mailer, logger: Logger): Promise<void> {
  const was = await readSetting(store.root, PUBLIC_URL);
  if (was !== null && was !== config.publicUrl) logger.warn('public_url_changed', { was, now: config.publicUrl });
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
