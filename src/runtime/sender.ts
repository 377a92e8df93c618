/**
 * The sender: runs inside `serve` (never in an admin command), claims due messages and delivers
 * them, mail through the mailer (SMTP or the outbox folder), webhooks as Standard Webhooks
 * (signed by the `standardwebhooks` library) and SCIM pushes to apps' SCIM endpoints
 * (scim-push.ts). Each try is recorded: delivered, or the error and the next try (5 s, 1 min,
 * 10 min, 1 h, 6 h, each ±20 %), then failed, kept for the operator.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import net from 'node:net';
import type { Clock } from '../clock';
import type { Logger } from '../log';
import type { Mailer, MailMessage } from '../mail/mailer';
import type { Store } from '../store/connection';
import { anyDue, claimDue, type DeliveryKind, type DeliveryRow, findWebhookById, markDelivered, markFailedTry, releaseClaims } from '../store/deliveries';
import { findScimTargetById, type ScimTargetRow } from '../store/scim';
import { refusedKind, type TargetPolicy } from '../config/address-ranges';
import { guardedLookup, TargetRefused } from './targets';

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
  if (err instanceof TargetRefused) return err.message;
  if ((err as { code?: string })?.code === 'ETARGETREFUSED') return (err as Error).message;
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

/** How a SCIM push is made over HTTP: the sender's own guarded request to the target. */
export type ScimRequest = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: URL, token: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

/**
 * What a SCIM push does with its message (deliveries/scim-push.ts, handed in by the core): the
 * sender owns the queue and the wire, the push its meaning.
 */
export type ScimPusher = (store: Store, target: ScimTargetRow, message: unknown, request: ScimRequest) => Promise<void>;

/**
 * What a back-channel logout message becomes (handed in by the core): where to POST it and the
 * signed logout token, made now (a retry hours later carries a fresh iat); null when the client
 * is gone or no longer asks for them.
 */
export type LogoutSigner = (message: unknown, messageId: string) => Promise<{ url: string; token: string } | null>;

/**
 * A loop that looks for due messages when nudged and every POLL_MS while idle; one look at a
 * time (a nudge during a look asks for another).
 */
class Poller {
  private timer: NodeJS.Timeout | null = null;
  running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly look: () => Promise<void>,
    private readonly live: () => boolean,
    private readonly onError: (err: unknown) => void,
  ) {}

  nudge(): void {
    if (!this.live()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.cancel();
    this.running = this.look()
      .catch(this.onError)
      .finally(() => {
        this.running = null;
        if (!this.live()) return;
        if (this.again) {
          this.again = false;
          this.nudge();
        } else this.timer = setTimeout(() => this.nudge(), POLL_MS);
      });
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * Three lanes: mail never waits behind webhooks or pushes; webhooks go to each endpoint, and SCIM
 * pushes to each target, one at a time, in order, each endpoint on its own: a receiver that hangs
 * holds only its own messages (for the 10 s timeout of each try), never mail or another
 * endpoint's. At most WEBHOOK_ENDPOINTS endpoints of each lane are sent to at once by one server.
 */
const WEBHOOK_ENDPOINTS = 32;
/** A SCIM answer read at most this far (a page of a target's list is far smaller). */
const SCIM_ANSWER_LIMIT = 1024 * 1024;

export class Sender {
  /** This process, in the rows it claims. */
  private readonly id = `srv_${randomBytes(9).toString('base64url')}`;
  private stopped = true;
  private readonly mail: Poller;
  private readonly hooks: Poller;
  private readonly pushes: Poller;
  private readonly logouts: Poller;
  /** Per lane, endpoint id (a webhook's, a SCIM target's) → its messages being sent now, one after another. */
  private readonly endpoints = { webhook: new Map<number, Promise<void>>(), scim: new Map<number, Promise<void>>() };
  readonly counts: DeliveryCounts = {
    mail: { delivered: 0, retried: 0, failed: 0 },
    webhook: { delivered: 0, retried: 0, failed: 0 },
    scim: { delivered: 0, retried: 0, failed: 0 },
    logout: { delivered: 0, retried: 0, failed: 0 },
  };

  constructor(
    private readonly store: Store,
    private readonly mailer: Mailer,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly targets: TargetPolicy,
    private readonly push: ScimPusher,
    private readonly signLogout: LogoutSigner,
  ) {
    const onError = (err: unknown) => this.logger.error('delivery_poll_failed', { error: errorOf(err) });
    this.mail = new Poller(
      () => this.drainLane('mail'),
      () => !this.stopped,
      onError,
    );
    this.hooks = new Poller(
      () => this.drainEndpoints('webhook'),
      () => !this.stopped,
      onError,
    );
    this.pushes = new Poller(
      () => this.drainEndpoints('scim'),
      () => !this.stopped,
      onError,
    );
    this.logouts = new Poller(
      () => this.drainLane('logout'),
      () => !this.stopped,
      onError,
    );
  }

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
    this.mail.nudge();
    this.hooks.nudge();
    this.pushes.nudge();
    this.logouts.nudge();
  }

  /** Sends until nothing is due and nothing is in flight (tests and shutdown wait on it). */
  async flush(): Promise<void> {
    for (;;) {
      await this.idle();
      if (this.stopped) return;
      await this.drainLane('mail');
      await this.drainLane('logout');
      await this.drainEndpoints('webhook');
      await this.drainEndpoints('scim');
      if (this.inFlight().length === 0) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.mail.cancel();
    this.hooks.cancel();
    this.pushes.cancel();
    this.logouts.cancel();
    await this.idle();
  }

  private inFlight(): Array<Promise<void>> {
    return [...this.endpoints.webhook.values(), ...this.endpoints.scim.values()];
  }

  private async idle(): Promise<void> {
    const lanes = [this.mail, this.hooks, this.pushes, this.logouts];
    while (lanes.some((l) => l.running) || this.inFlight().length > 0) await Promise.all([...lanes.map((l) => l.running), ...this.inFlight()]);
  }

  /** Mail, and logout tokens: a batch at a time, each message on its own. */
  private async drainLane(kind: 'mail' | 'logout'): Promise<void> {
    // A read first: an idle queue costs no write transaction per poll.
    while (!this.stopped && (await anyDue(this.store.root, { kind }))) {
      const claimed = await claimDue(this.store.root, this.id, BATCH, LEASE_MS, { kind });
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((d) => this.deliver(d)));
    }
  }

  /** Claims what is due for endpoints not already being sent to, and starts each endpoint's run; waits for none. */
  private async drainEndpoints(kind: 'webhook' | 'scim'): Promise<void> {
    const running = this.endpoints[kind];
    const endpointOf = (d: DeliveryRow) => (kind === 'scim' ? d.scim_target_id : d.webhook_id) ?? 0;
    for (;;) {
      if (this.stopped || running.size >= WEBHOOK_ENDPOINTS) return;
      const lane = { kind, busy: [...running.keys()] };
      if (!(await anyDue(this.store.root, lane))) return;
      const claimed = await claimDue(this.store.root, this.id, BATCH, LEASE_MS, lane);
      if (claimed.length === 0) return;
      const byEndpoint = new Map<number, DeliveryRow[]>();
      for (const d of claimed) byEndpoint.set(endpointOf(d), [...(byEndpoint.get(endpointOf(d)) ?? []), d]);
      for (const [endpoint, messages] of byEndpoint) {
        const run = (async () => {
          for (const d of messages) await this.deliver(d);
        })().finally(() => {
          running.delete(endpoint);
          (kind === 'scim' ? this.pushes : this.hooks).nudge();
        });
        running.set(endpoint, run);
      }
    }
  }

  private async deliver(d: DeliveryRow): Promise<void> {
    try {
      if (d.payload === null) throw new Error('nothing to send');
      if (d.kind === 'mail') await this.mailer.send(JSON.parse(d.payload) as MailMessage);
      else if (d.kind === 'scim') await this.pushScim(d, d.payload);
      else if (d.kind === 'logout') await this.logout(d, d.payload);
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

  /** One SCIM push: the person or group made right on the target (scim-push.ts). */
  private async pushScim(d: DeliveryRow, payload: string): Promise<void> {
    const target = d.scim_target_id === null ? undefined : await findScimTargetById(this.store.root, d.scim_target_id);
    if (!target) throw new Error('the SCIM target was removed');
    const request: ScimRequest = async (method, url, token, body) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const r = await sendTo(
        url,
        method,
        {
          accept: 'application/scim+json',
          authorization: `Bearer ${token}`,
          'user-agent': 'Gatehouse-SCIM',
          ...(text === undefined ? {} : { 'content-type': 'application/scim+json' }),
        },
        text,
        this.targets,
        SCIM_ANSWER_LIMIT,
      );
      return { status: r.status, body: jsonOrNull(r.body) };
    };
    await this.push(this.store, target, JSON.parse(payload) as unknown, request);
  }

  /**
   * One back-channel logout: the token POSTed as a form (OpenID Connect Back-Channel Logout 1.0
   * 2.5); a 200 or 204 is delivered, anything else is tried again. A redirect is not followed.
   */
  private async logout(d: DeliveryRow, payload: string): Promise<void> {
    const made = await this.signLogout(JSON.parse(payload) as unknown, d.message_id);
    if (!made) throw new Error('the client was removed or no longer takes back-channel logouts');
    const body = new URLSearchParams({ logout_token: made.token }).toString();
    const { status } = await sendTo(
      new URL(made.url),
      'POST',
      { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Gatehouse-Logout', 'cache-control': 'no-store' },
      body,
      this.targets,
      0,
    );
    if (status !== 200 && status !== 204) throw new Error(`HTTP ${status}`);
  }

  /** One Standard Webhooks POST: a 2xx within 10 s is delivered; a redirect is not followed. */
  private async post(d: DeliveryRow, body: string): Promise<void> {
    const hook = d.webhook_id === null ? undefined : await findWebhookById(this.store.root, d.webhook_id);
    if (!hook) throw new Error('the webhook was removed');
    const { Webhook } = await standardWebhooks();
    const at = new Date(this.clock.now());
    const signature = new Webhook(hook.secret).sign(d.message_id, at, body);
    const { status } = await sendTo(
      new URL(hook.url),
      'POST',
      {
        'content-type': 'application/json',
        'user-agent': 'Gatehouse-Webhooks',
        'webhook-id': d.message_id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body,
      this.targets,
      0,
    );
    if (status < 200 || status > 299) throw new Error(`HTTP ${status}`);
  }
}

/** An answer's JSON; null when there is none or it is not JSON (its status decides then: a DELETE's 204 has no body). */
function jsonOrNull(text: string): unknown {
  try {
    return text.length > 0 ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/**
 * Sends one request and answers its status and up to `readLimit` bytes of its body (0: none),
 * within WEBHOOK_TIMEOUT_MS in all. The address dialled is checked against the target policy
 * twice: the resolver's answers before connecting (a name that resolves inside the network), and
 * the socket's peer once connected (whatever resolved it). A redirect is not followed.
 */
function sendTo(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  targets: TargetPolicy,
  readLimit: number,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(literal)) {
      const kind = refusedKind(literal, targets);
      if (kind !== null) return reject(new TargetRefused(kind, literal));
    }
    // node:http and node:https loaded at the first delivery, not at start (an admin command needs neither).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const request = (require(url.protocol === 'https:' ? 'node:https' : 'node:http') as typeof http).request(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      lookup: guardedLookup(targets),
      agent: false,
      timeout: WEBHOOK_TIMEOUT_MS,
    });
    const timer = setTimeout(() => request.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), WEBHOOK_TIMEOUT_MS);
    request.on('socket', (socket) =>
      socket.once('connect', () => {
        const peer = socket.remoteAddress ?? '';
        const kind = refusedKind(peer, targets);
        if (kind !== null) request.destroy(new TargetRefused(kind, peer));
      }),
    );
    request.on('timeout', () => request.destroy(Object.assign(new Error('timeout'), { name: 'TimeoutError' })));
    request.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (readLimit === 0) {
        clearTimeout(timer);
        res.resume();
        res.destroy();
        return resolve({ status, body: '' });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > readLimit) return request.destroy(new Error(`the answer is larger than ${readLimit} bytes`));
        chunks.push(chunk);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    request.end(body);
  });
}
