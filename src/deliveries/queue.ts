/**
 * Putting messages in the queue. A mail is queued in the transaction of the change that causes
 * it (the token it carries, the invitation it announces); a webhook event is queued with the
 * audit row of the change (audit.ts), so both are durable before anyone is told "done", and only
 * a running server sends them (sender.ts).
 */
import type { Actor } from '../actor';
import type { AuditEvent } from '../audit-events';
import type { Clock } from '../clock';
import type { MailMessage } from '../mail/mailer';
import type { Tx } from '../store/connection';
import { findAccountByReference } from '../store/accounts';
import { enqueue, listWebhooks, type NewDelivery, type WebhookRow } from '../store/deliveries';
import type { EndingSignin } from '../store/logout';
import { type AccountFacts, eventBody, eventTypeOf, subscribes } from './events';
import { pushMessages, pushReads, type PushReads } from './scim-push';

/** The kinds of mail, as the queue lists them. */
export type MailTopic =
  'verification' | 'reset' | 'unlock' | 'invitation' | 'email_moved' | 'signin_code' | 'recovery' | 'recovery_used' | 'new_signin' | 'ssh_key';

export async function queueMail(tx: Tx, message: MailMessage, topic: MailTopic): Promise<void> {
  await enqueue(tx, [{ kind: 'mail', topic, payload: JSON.stringify(message) }]);
}

export const LOGOUT_TOPIC = 'backchannel_logout';

/** What a back-channel logout message carries; the logout token is signed when it is sent (oidc/logout.ts). */
export interface LogoutMessage {
  client_id: string;
  /** The account's reference id (the ID tokens' sub). */
  sub: string;
  /** The Gatehouse session (the ID tokens' sid). */
  sid: string;
}

/** A logout message per sign-in whose client has a back-channel logout URI, in the caller's transaction; answers how many. */
export async function queueLogouts(tx: Tx, signins: readonly EndingSignin[]): Promise<number> {
  const messages: NewDelivery[] = signins
    .filter((r) => typeof (JSON.parse(r.metadata) as { backchannel_logout_uri?: unknown }).backchannel_logout_uri === 'string')
    .map((r) => ({
      kind: 'logout',
      topic: LOGOUT_TOPIC,
      payload: JSON.stringify({ client_id: r.client_id, sub: r.sub, sid: r.sid } satisfies LogoutMessage),
    }));
  await enqueue(tx, messages);
  return messages.length;
}

/**
 * The endpoints and targets events' messages are made for: read once for all the events audited
 * together (Audit.recordAll), through `on`: the caller's transaction when there is one (a second
 * connection asked for while it holds the accounts lock could wait behind the very requests
 * waiting for that lock, on PostgreSQL's bounded pool), else the store's root.
 */
export interface EventReads {
  on: Tx;
  webhooks(): Promise<WebhookRow[]>;
  push: PushReads;
}

export function eventReads(on: Tx): EventReads {
  let webhooks: Promise<WebhookRow[]> | undefined;
  return { on, webhooks: () => (webhooks ??= listWebhooks(on)), push: pushReads(on) };
}

/**
 * The messages an audited event makes: a webhook message per endpoint that subscribes to it, and
 * a SCIM push message per target it can concern (scim-push.ts); none when there are neither (two
 * small reads, no write: the common case costs a signup nothing more).
 */
export async function eventMessages(
  reads: EventReads,
  clock: Clock,
  auditEvent: AuditEvent,
  actor: Actor,
  fields: Readonly<Record<string, unknown>> & { account: string | null },
  about?: AccountFacts,
): Promise<NewDelivery[]> {
  const pushes = await pushMessages(reads.push, auditEvent, fields);
  const type = eventTypeOf(auditEvent);
  if (type === null) return pushes;
  const hooks = (await reads.webhooks()).filter((w) => subscribes(JSON.parse(w.events) as string[], type));
  if (hooks.length === 0) return pushes;
  let account: AccountFacts | { id: string } | null = about ?? null;
  if (!account && fields.account !== null) {
    const row = await findAccountByReference(reads.on, fields.account);
    account = row ? { id: row.reference_id, email: row.email, name: row.name } : { id: fields.account };
  }
  const payload = eventBody(type, clock.now(), actor, account, fields);
  return [...hooks.map((w) => ({ kind: 'webhook' as const, webhook_id: w.id, topic: type, payload })), ...pushes];
}
