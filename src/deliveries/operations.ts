/**
 * The deliveries domain's operations (administrators and the shell): webhook endpoints (add,
 * list, show, remove, rotate the secret) and the queue as the operator sees it (pending and
 * failed messages with their last error).
 */
import { randomBytes } from 'node:crypto';
import { iso } from '../clock';
import { AppError } from '../errors';
import { checkTargetUrl, parseWebhookUrl, shownUrl, targetPolicy } from '../runtime/targets';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { isReference } from '../store/reference';
import { unlessManaged } from '../managed/managed-by';
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  queueFigures,
  setWebhookSecret,
  webhookHealth,
  type DeliveryState,
  type WebhookRow,
} from '../store/deliveries';
import { EVENT_TYPES, type EventType } from './events';

export interface WebhookView {
  id: string;
  /** The URL with any query values hidden: a key in a query string is not printed back. */
  url: string;
  description: string;
  /** The events it receives; empty: every event. */
  events: string[];
  created_at: string;
  pending: number;
  failed: number;
  last_error: string | null;
  last_delivered_at: string | null;
}

export interface DeliveryView {
  id: string;
  kind: 'mail' | 'webhook' | 'scim' | 'logout';
  topic: string;
  state: DeliveryState;
  attempts: number;
  /** When the next try is due (pending), or null. */
  next_try_at: string | null;
  last_error: string | null;
  webhook: string | null;
  /** A SCIM push's target, by name. */
  scim_target: string | null;
  created_at: string;
}

export interface NewWebhook {
  url: string;
  events?: readonly string[];
  description?: string;
}

export interface DeliveryOperations {
  /** Registers an endpoint; the answer holds its signing secret, shown this once. */
  addWebhook(actor: Actor, input: NewWebhook): Promise<{ webhook: WebhookView; secret: string }>;
  listWebhooks(actor: Actor): Promise<WebhookView[]>;
  showWebhook(actor: Actor, id: string): Promise<WebhookView>;
  /** Removes an endpoint and the messages still queued for it. */
  removeWebhook(actor: Actor, id: string): Promise<WebhookView>;
  rotateWebhookSecret(actor: Actor, id: string): Promise<{ webhook: WebhookView; secret: string }>;
  /** Pending and failed messages, newest first (`states` narrows it). */
  list(actor: Actor, states?: readonly DeliveryState[]): Promise<DeliveryView[]>;
  figures(actor: Actor): Promise<{ pending: number; failed: number; oldest_pending_s: number | null }>;
}

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function parseEvents(events: readonly string[] | undefined): EventType[] {
  const out: EventType[] = [];
  for (const e of events ?? []) {
    const name = e.trim();
    if (!(EVENT_TYPES as readonly string[]).includes(name)) {
      throw new AppError('invalid_input', `unknown {--event} ${name.slice(0, 60)}; the events are ${EVENT_TYPES.join(', ')}`);
    }
    if (!out.includes(name as EventType)) out.push(name as EventType);
  }
  return out;
}

export function deliveryOperations(s: Services): DeliveryOperations {
  const views = async (rows: WebhookRow[]): Promise<WebhookView[]> => {
    const health = await webhookHealth(s.store.root);
    return rows.map((w) => {
      const h = health.get(w.id);
      return {
        id: w.reference_id,
        url: shownUrl(w.url),
        description: w.description,
        events: JSON.parse(w.events) as string[],
        created_at: iso(w.created_at),
        pending: h?.pending ?? 0,
        failed: h?.failed ?? 0,
        last_error: h?.lastError ?? null,
        last_delivered_at: iso(h?.lastDeliveredAt ?? null),
      };
    });
  };
  const find = async (id: string): Promise<WebhookRow> => {
    const row = isReference(id) ? await findWebhook(s.store.root, id) : undefined;
    if (!row) throw new AppError('not_found', `no webhook ${id.slice(0, 60)} (gatehouse webhook list shows them)`);
    return row;
  };
  const one = async (row: WebhookRow) => (await views([row]))[0];
  return {
    async addWebhook(actor, input) {
      requireAdministrator(actor, 'add webhooks');
      const url = parseWebhookUrl(input.url);
      await checkTargetUrl(new URL(url), targetPolicy(s.config.webhookAllowPrivate), '{--url}');
      const events = parseEvents(input.events);
      const description = (input.description ?? '').trim();
      if (description.length > 200 || CONTROL.test(description))
        throw new AppError('invalid_input', '{--description} is at most 200 characters, no control characters');
      // A second endpoint of a URL a configuration file manages would leave the file two to choose from.
      const sameUrl = (await listWebhooks(s.store.root)).filter((w) => w.url === url).map((w) => w.reference_id);
      const secret = newSecret();
      const row = await unlessManaged(s.store, actor.via, 'webhook', sameUrl, (tx) =>
        insertWebhook(tx, { url, description, events: JSON.stringify(events), secret }),
      );
      await s.audit.record('webhook_added', actor, { account: null, webhook: row.reference_id, events: events.join(',') || '*' });
      return { webhook: await one(row), secret };
    },
    async listWebhooks(actor) {
      requireAdministrator(actor, 'see webhooks');
      return views(await listWebhooks(s.store.root));
    },
    async showWebhook(actor, id) {
      requireAdministrator(actor, 'see webhooks');
      return one(await find(id));
    },
    async removeWebhook(actor, id) {
      requireAdministrator(actor, 'remove webhooks');
      const row = await find(id);
      const shown = await one(row);
      const deleted = await unlessManaged(s.store, actor.via, 'webhook', row.reference_id, (tx) => deleteWebhook(tx, row.id));
      if (!deleted) throw new AppError('not_found', `no webhook ${id}`);
      await s.audit.record('webhook_removed', actor, { account: null, webhook: row.reference_id });
      return shown;
    },
    async rotateWebhookSecret(actor, id) {
      requireAdministrator(actor, 'change webhooks');
      const row = await find(id);
      const secret = newSecret();
      await unlessManaged(s.store, actor.via, 'webhook', row.reference_id, (tx) => setWebhookSecret(tx, row.id, secret));
      await s.audit.record('webhook_secret_rotated', actor, { account: null, webhook: row.reference_id });
      return { webhook: await one(row), secret };
    },
    async list(actor, states = ['pending', 'failed']) {
      requireAdministrator(actor, 'see deliveries');
      const rows = await listDeliveries(s.store.root, states, 200);
      return rows.map((d) => ({
        id: d.message_id,
        kind: d.kind,
        topic: d.topic,
        state: d.state,
        attempts: d.attempts,
        next_try_at: d.state === 'pending' ? iso(d.next_at) : null,
        last_error: d.last_error,
        webhook: d.webhook,
        scim_target: d.scim_target,
        created_at: iso(d.created_at),
      }));
    },
    async figures(actor) {
      requireAdministrator(actor, 'see deliveries');
      const f = await queueFigures(s.store.root);
      return {
        pending: f.pending,
        failed: f.failed,
        oldest_pending_s: f.oldestPendingAt === null ? null : Math.max(0, Math.round((s.clock.now() - f.oldestPendingAt) / 1000)),
      };
    },
  };
}
