/**
 * The delivery queue and the webhook endpoints (contract section 17). A message is enqueued in
 * the caller's transaction; a sender claims due messages by moving their next_at ahead by a lease
 * (on PostgreSQL with FOR UPDATE SKIP LOCKED, so two instances never claim the same row), then
 * records the outcome. A sender that dies mid-try leaves the claim to run out: at least once.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { atomically, op, rawRows, type Handle } from './handle';
import { decodeRow } from './schema';

export type DeliveryKind = 'mail' | 'webhook' | 'scim' | 'logout';
export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface DeliveryRow {
  id: number;
  message_id: string;
  kind: DeliveryKind;
  webhook_id: number | null;
  /** A SCIM push's target (kind scim). */
  scim_target_id: number | null;
  topic: string;
  payload: string | null;
  state: DeliveryState;
  attempts: number;
  next_at: number;
  claimed_by: string | null;
  last_error: string | null;
  created_at: number;
  done_at: number | null;
}

export interface WebhookRow {
  id: number;
  reference_id: string;
  url: string;
  description: string;
  events: string;
  secret: string;
  created_at: number;
}

const decode = (r: Record<string, unknown>) => decodeRow<DeliveryRow>('delivery', r);
const decodeHook = (r: Record<string, unknown>) => decodeRow<WebhookRow>('webhook', r);

export const newMessageId = () => `msg_${randomBytes(16).toString('base64url')}`;

export interface NewDelivery {
  kind: DeliveryKind;
  webhook_id?: number | null;
  scim_target_id?: number | null;
  topic: string;
  payload: string;
}

/** Rows of one insert: knex writes SQLite's as a compound SELECT, of at most 500 terms (and 6,500 bound values). */
const ROWS_PER_INSERT = 500;

/** Queues messages, due now, in the caller's transaction (or on their own): ROWS_PER_INSERT to an insert. */
export const enqueue = op(async (h, messages: readonly NewDelivery[]): Promise<void> => {
  const now = h.clock.now();
  for (let i = 0; i < messages.length; i += ROWS_PER_INSERT) await insertDeliveries(h, messages.slice(i, i + ROWS_PER_INSERT), now);
});

async function insertDeliveries(h: Handle, messages: readonly NewDelivery[], now: number): Promise<void> {
  await h.k('delivery').insert(
    messages.map((m) => ({
      message_id: newMessageId(),
      kind: m.kind,
      webhook_id: m.webhook_id ?? null,
      scim_target_id: m.scim_target_id ?? null,
      topic: m.topic,
      payload: m.payload,
      state: 'pending',
      attempts: 0,
      next_at: now,
      claimed_by: null,
      last_error: null,
      created_at: now,
      done_at: null,
    })),
  );
}

/** Which messages a sender's lane takes: one kind, and for webhooks and SCIM pushes not the endpoints it is already sending to. */
export interface Lane {
  kind: DeliveryKind;
  /** Webhook (or SCIM target) ids with a try in flight in this process: their next messages wait (in order per endpoint). */
  busy?: readonly number[];
}

function laneSql(lane: Lane): { sql: string; params: Array<string | number> } {
  const busy = lane.busy ?? [];
  const column = lane.kind === 'scim' ? 'scim_target_id' : 'webhook_id';
  return {
    sql: `state = 'pending' AND next_at <= ? AND kind = ?${busy.length ? ` AND ${column} NOT IN (${busy.map(() => '?').join(', ')})` : ''}`,
    params: [lane.kind, ...busy],
  };
}

/**
 * Claims up to `limit` due messages of a lane for `leaseMs`: their next_at moves past the lease,
 * so no other sender sees them due until the lease runs out (a sender killed mid-try).
 */
export const claimDue = op(async (h, by: string, limit: number, leaseMs: number, lane: Lane): Promise<DeliveryRow[]> => {
  const now = h.clock.now();
  const where = laneSql(lane);
  if (h.dialect === 'postgres') {
    const rows = await rawRows(
      h.k,
      `UPDATE delivery SET next_at = ?, claimed_by = ? WHERE id IN (
         SELECT id FROM delivery WHERE ${where.sql} ORDER BY next_at, id LIMIT ? FOR UPDATE SKIP LOCKED
       ) RETURNING *`,
      [now + leaseMs, by, now, ...where.params, limit],
    );
    return rows.map(decode).sort((a, b) => a.next_at - b.next_at || a.id - b.id);
  }
  // SQLite has one writer at a time: read and move in one transaction.
  return atomically(h, async (t) => {
    const rows = await t.all(`SELECT * FROM delivery WHERE ${where.sql} ORDER BY next_at, id LIMIT ?`, [now, ...where.params, limit]);
    if (rows.length === 0) return [];
    await t
      .k('delivery')
      .whereIn(
        'id',
        rows.map((r) => Number(r.id)),
      )
      .update({ next_at: now + leaseMs, claimed_by: by });
    return rows.map(decode);
  });
});

/** Whether any message of a lane is due (a read, before the claim's write). */
export const anyDue = op(async (h, lane: Lane): Promise<boolean> => {
  const where = laneSql(lane);
  const rows = await h.all(`SELECT 1 AS due FROM delivery WHERE ${where.sql} LIMIT 1`, [h.clock.now(), ...where.params]);
  return rows.length > 0;
});

/** Claims left by a server that is gone (SQLite: only one server runs) are due again now. */
export const releaseClaims = op(async (h): Promise<number> =>
  h.k('delivery').where({ state: 'pending' }).whereNotNull('claimed_by').update({ claimed_by: null, next_at: h.clock.now() }),
);

/** The try succeeded: delivered, and a mail's text (its links) is not kept. */
export const markDelivered = op(async (h, d: Pick<DeliveryRow, 'id' | 'kind'>): Promise<void> => {
  await h
    .k('delivery')
    .where({ id: d.id })
    .update({
      state: 'delivered',
      done_at: h.clock.now(),
      claimed_by: null,
      last_error: null,
      ...(d.kind === 'mail' ? { payload: null } : {}),
      attempts: h.k.raw('attempts + 1'),
    });
});

/** The try failed: due again at `nextAt`, or failed for good when `nextAt` is null. */
export const markFailedTry = op(async (h, d: Pick<DeliveryRow, 'id' | 'kind'>, error: string, nextAt: number | null): Promise<void> => {
  const attempts = h.k.raw('attempts + 1');
  if (nextAt === null) {
    await h
      .k('delivery')
      .where({ id: d.id })
      .update({ state: 'failed', done_at: h.clock.now(), claimed_by: null, last_error: error, attempts, ...(d.kind === 'mail' ? { payload: null } : {}) });
  } else {
    await h.k('delivery').where({ id: d.id }).update({ next_at: nextAt, claimed_by: null, last_error: error, attempts });
  }
});

export interface DeliveryListing extends DeliveryRow {
  webhook: string | null;
  url: string | null;
  scim_target: string | null;
}

/** Pending and failed deliveries (or the given states), newest first, with their webhook. */
export const listDeliveries = op(async (h, states: readonly DeliveryState[], limit: number): Promise<DeliveryListing[]> => {
  const rows: Array<Record<string, unknown>> = await h
    .k('delivery')
    .leftJoin('webhook', 'webhook.id', 'delivery.webhook_id')
    .leftJoin('scim_target', 'scim_target.id', 'delivery.scim_target_id')
    .whereIn('delivery.state', states as DeliveryState[])
    .orderBy('delivery.id', 'desc')
    .limit(limit)
    .select('delivery.*', 'webhook.reference_id as webhook', 'webhook.url as url', 'scim_target.name as scim_target');
  return rows.map(({ webhook, url, scim_target, ...r }) => ({
    ...decode(r),
    webhook: (webhook as string | null) ?? null,
    url: (url as string | null) ?? null,
    scim_target: (scim_target as string | null) ?? null,
  }));
});

/** Queue depth and the oldest pending message's creation time (for /metrics and the console). */
export const queueFigures = op(async (h): Promise<{ pending: number; failed: number; oldestPendingAt: number | null }> => {
  // Through the read pool on SQLite: a scrape of /metrics never queues behind a write waiting on the store's lock.
  const [p] = await h.all('SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM delivery WHERE state = ?', ['pending']);
  const [f] = await h.all('SELECT COUNT(*) AS n FROM delivery WHERE state = ?', ['failed']);
  const oldest = p?.oldest === null || p?.oldest === undefined ? null : Number(p.oldest);
  return { pending: Number(p?.n ?? 0), failed: Number(f?.n ?? 0), oldestPendingAt: oldest };
});

/** Delivered messages older than `keepMs` go; failed ones stay for the operator (until `keepFailedMs`). */
export const pruneDeliveries = op(async (h, keepMs: number, keepFailedMs: number): Promise<void> => {
  const now = h.clock.now();
  await h
    .k('delivery')
    .where({ state: 'delivered' })
    .andWhere('done_at', '<', now - keepMs)
    .del();
  await h
    .k('delivery')
    .where({ state: 'failed' })
    .andWhere('done_at', '<', now - keepFailedMs)
    .del();
});

// Webhook endpoints.

export const insertWebhook = op(async (h, w: Pick<WebhookRow, 'url' | 'description' | 'events' | 'secret'>): Promise<WebhookRow> => {
  const row = { ...w, reference_id: randomUUID(), created_at: h.clock.now() };
  await h.k('webhook').insert(row);
  return decodeHook((await h.k('webhook').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
});

export const listWebhooks = op(async (h): Promise<WebhookRow[]> => (await h.k('webhook').orderBy('id')).map(decodeHook));

export const findWebhook = op(async (h, referenceId: string): Promise<WebhookRow | undefined> => {
  const row = await h.k('webhook').where({ reference_id: referenceId }).first();
  return row ? decodeHook(row) : undefined;
});

export const findWebhookById = op(async (h, id: number): Promise<WebhookRow | undefined> => {
  const row = await h.k('webhook').where({ id }).first();
  return row ? decodeHook(row) : undefined;
});

/** Removes an endpoint; its queued messages go with it (ON DELETE CASCADE). */
export const deleteWebhook = op(async (h, id: number): Promise<boolean> => (await h.k('webhook').where({ id }).del()) > 0);

export const setWebhookSecret = op(async (h, id: number, secret: string): Promise<void> => {
  await h.k('webhook').where({ id }).update({ secret });
});

/** Changes an endpoint's events, description or signing secret (a configuration file's apply). */
export const updateWebhook = op(async (h, id: number, w: Partial<Pick<WebhookRow, 'events' | 'description' | 'secret'>>): Promise<void> => {
  if (Object.keys(w).length > 0) await h.k('webhook').where({ id }).update(w);
});

/** Per endpoint: deliveries pending, failed for good, and the last error seen. */
export const webhookHealth = op(
  async (h): Promise<Map<number, { pending: number; failed: number; lastError: string | null; lastDeliveredAt: number | null }>> => {
    const rows: Array<Record<string, unknown>> = await h
      .k('delivery')
      .whereNotNull('webhook_id')
      .groupBy('webhook_id')
      .select('webhook_id')
      .select(h.k.raw("SUM(CASE WHEN state = 'pending' THEN 1 ELSE 0 END) AS pending"))
      .select(h.k.raw("SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END) AS failed"))
      .select(h.k.raw("MAX(CASE WHEN state = 'delivered' THEN done_at END) AS delivered_at"));
    const errors: Array<Record<string, unknown>> = await h
      .k('delivery')
      .whereNotNull('webhook_id')
      .whereNotNull('last_error')
      .whereIn('id', h.k('delivery').whereNotNull('last_error').groupBy('webhook_id').max('id'))
      .select('webhook_id', 'last_error');
    const out = new Map<number, { pending: number; failed: number; lastError: string | null; lastDeliveredAt: number | null }>();
    for (const r of rows) {
      out.set(Number(r.webhook_id), {
        pending: Number(r.pending ?? 0),
        failed: Number(r.failed ?? 0),
        lastError: null,
        lastDeliveredAt: r.delivered_at === null || r.delivered_at === undefined ? null : Number(r.delivered_at),
      });
    }
    for (const e of errors) {
      const entry = out.get(Number(e.webhook_id));
      if (entry) entry.lastError = (e.last_error as string) ?? null;
    }
    return out;
  },
);

// Settings the running server records for the shell (the public URL, where mail goes).

export const readSetting = op(async (h, name: string): Promise<string | null> => {
  const row = await h.k('gatehouse_setting').where({ name }).first('value');
  return (row?.value as string | undefined) ?? null;
});

export const writeSetting = op(async (h, name: string, value: string): Promise<void> => {
  await h.k('gatehouse_setting').insert({ name, value }).onConflict('name').merge();
});
