/**
 * The sender: runs inside `serve` (never in an admin command), claims due messages and delivers
 * them, mail through the mailer (SMTP or the outbox folder) and webhooks as Standard Webhooks
 * (signed by the `standardwebhooks` library). Each try is recorded: delivered, or the error and
 * the next try (5 s, 1 min, 10 min, 1 h, 6 h, each ±20 %), then failed, kept for the operator.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Mailer, MailMessage } from '../mail/mailer';
import type { Store } from '../store/connection';
import { anyDue, claimDue, type DeliveryKind, type DeliveryRow, findWebhookById, markDelivered, markFailedTry, releaseClaims } from '../store/deliveries';

/** The waits after the 1st, 2nd, … failed try; after the last, the message has failed. */
export const BACKOFF_MS = [5_000, 60_000, 600_000, 3_600_000, 21_600_000] as const;
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** How long a claim holds a message: longer than any one try (SMTP's own timeouts are 30 s each). */
const LEASE_MS = 5 * 60_000;
const POLL_MS = 500;
const BATCH = 20;

export type Outcome = 'delivered' | 'retried' | 'failed';
export type DeliveryCounts = Record<DeliveryKind, Record<Outcome, number>>;

/** The delay before try `attempt + 1` after `attempt` failed tries, or null when there is none. */
export function retryDelay(attempt: number, random = Math.random): number | null {
  const base = BACKOFF_MS[attempt - 1];
  return base === undefined ? null : Math.round(base * (0.8 + 0.4 * random()));
}

/** What a failed try says in the queue: a code or a status, never a server's reply text (it can echo addresses). */
function errorOf(err: unknown): string {
  const e = err as { code?: string; responseCode?: number; name?: string; cause?: { code?: string; errors?: Array<{ code?: string }> } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timeout';
  if (e?.responseCode) return `SMTP ${e.responseCode}${e.code ? ` ${e.code}` : ''}`;
  // fetch's "fetch failed" carries the network error (one per address tried) as its cause.
  const network = e?.cause?.code ?? e?.cause?.errors?.find((x) => x.code)?.code;
  return network ?? e?.code ?? (err instanceof Error ? err.message.slice(0, 200) : 'error');
}

type Webhooks = typeof import('standardwebhooks');
let library: Promise<Webhooks> | null = null;
/** Loaded at the first webhook, not at start-up (most servers have none). */
const standardWebhooks = () => (library ??= import('standardwebhooks'));

export class Sender {
  /** This process, in the rows it claims. */
  private readonly id = `srv_${randomBytes(9).toString('base64url')}`;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  readonly counts: DeliveryCounts = {
    mail: { delivered: 0, retried: 0, failed: 0 },
    webhook: { delivered: 0, retried: 0, failed: 0 },
  };

  constructor(
    private readonly store: Store,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /** True while this process delivers (serve), false in an admin command. */
  get sending(): boolean {
    return !this.stopped;
  }

  /** Starts delivering; on SQLite (one server per store) the claims of a server that died are due at once. */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.store.dialect === 'sqlite') {
      const released = await releaseClaims(this.store.root);
      if (released > 0) this.logger.info('deliveries_resumed', { messages: released });
    }
    this.nudge();
  }

  /** Something was queued (or may be due): look now, not at the next poll. */
  nudge(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.drain()
      .catch((err: unknown) => this.logger.error('delivery_poll_failed', { error: errorOf(err) }))
      .finally(() => {
        this.running = null;
        if (this.stopped) return;
        if (this.again) {
          this.again = false;
          this.nudge();
        } else this.timer = setTimeout(() => this.nudge(), POLL_MS);
      });
  }

  /** Sends until nothing is due (tests and shutdown wait on it). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (!this.stopped) await this.drain();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // A read first: an idle queue costs no write transaction per poll.
    while (!this.stopped && (await anyDue(this.store.root))) {
      const claimed = await claimDue(this.store.root, this.id, BATCH, LEASE_MS);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((d) => this.deliver(d)));
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    try {
      if (d.payload === null) throw new Error('nothing to send');
      if (d.kind === 'mail') await this.mailer.send(JSON.parse(d.payload) as MailMessage);
      else await this.post(d, d.payload);
    } catch (err) {
      const error = errorOf(err);
      const wait = retryDelay(d.attempts + 1);
      await markFailedTry(this.store.root, d, error, wait === null ? null : this.clock.now() + wait);
      this.counts[d.kind][wait === null ? 'failed' : 'retried']++;
      const fields = { message: d.message_id, kind: d.kind, topic: d.topic, attempt: String(d.attempts + 1), error };
      if (wait === null) this.logger.warn('delivery_failed', fields);
      else this.logger.info('delivery_retry', { ...fields, retry_in_s: String(Math.round(wait / 1000)) });
      return;
    }
    await markDelivered(this.store.root, d);
    this.counts[d.kind].delivered++;
    this.logger.info('delivered', { message: d.message_id, kind: d.kind, topic: d.topic, attempt: String(d.attempts + 1) });
  }

  /** One Standard Webhooks POST: a 2xx within 10 s is delivered; a redirect is not followed. */
  private async post(d: DeliveryRow, body: string): Promise<void> {
    const hook = d.webhook_id === null ? undefined : await findWebhookById(this.store.root, d.webhook_id);
    if (!hook) throw new Error('the webhook was removed');
    const { Webhook } = await standardWebhooks();
    const at = new Date(this.clock.now());
    const signature = new Webhook(hook.secret).sign(d.message_id, at, body);
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Gatehouse-Webhooks',
        'webhook-id': d.message_id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    });
    // The answer's body is not read beyond what is needed to free the connection.
    await res.body?.cancel().catch(() => undefined); // reason: a body that fails to cancel changes nothing
    if (res.status < 200 || res.status > 299) throw new Error(`HTTP ${res.status}`);
  }
}
