/**
 * The webhook events (contract section 17) and how each is made from the security event the core
 * audits. Every operation that changes an account already records one audit event, from the
 * shell, the console and the API alike; the webhook rides on that record, so an event cannot be
 * sent for a change that was not audited, nor missed for one that was.
 */
import type { Actor } from '../actor';
import type { AuditEvent } from '../audit-events';

export const EVENT_TYPES = [
  'account.created',
  'account.updated',
  'account.disabled',
  'account.enabled',
  'account.deleted',
  'account.signed_in',
  'account.signin_failed',
  'group.member_added',
  'group.member_removed',
  'session.revoked',
  'invitation.accepted',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The audited event behind each webhook event. */
const FROM_AUDIT: Readonly<Partial<Record<AuditEvent, EventType>>> = {
  signup: 'account.created',
  email_changed: 'account.updated',
  email_verified: 'account.updated',
  password_changed: 'account.updated',
  password_reset: 'account.updated',
  password_set: 'account.updated',
  totp_enabled: 'account.updated',
  totp_disabled: 'account.updated',
  totp_reset: 'account.updated',
  name_changed: 'account.updated',
  username_changed: 'account.updated',
  account_disabled: 'account.disabled',
  account_enabled: 'account.enabled',
  account_deleted: 'account.deleted',
  signin_ok: 'account.signed_in',
  signin_failed: 'account.signin_failed',
  group_member_added: 'group.member_added',
  administrator_added: 'group.member_added',
  group_member_removed: 'group.member_removed',
  administrator_removed: 'group.member_removed',
  session_revoked: 'session.revoked',
  sessions_revoked: 'session.revoked',
  invitation_accepted: 'invitation.accepted',
};

export const eventTypeOf = (auditEvent: AuditEvent): EventType | null => FROM_AUDIT[auditEvent] ?? null;

/** Audit details a payload may carry, by name: an allow-list, so no secret or counter leaks by a new field. */
const CARRIED = ['group', 'group_name', 'session', 'invitation', 'reason', 'method', 'provider', 'outcome'] as const;

export interface AccountFacts {
  id: string;
  email: string;
  name: string;
}

/** The body every endpoint gets: `{type, timestamp, data}` (Standard Webhooks' shape). */
export function eventBody(
  type: EventType,
  at: number,
  actor: Actor,
  account: AccountFacts | { id: string } | null,
  fields: Readonly<Record<string, unknown>>,
): string {
  const data: Record<string, unknown> = { account, via: actor.via };
  for (const key of CARRIED) {
    const v = fields[key];
    if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') data[key] = v;
  }
  if (typeof data.group === 'string') {
    data.group = { id: data.group, name: typeof data.group_name === 'string' ? data.group_name : null };
    delete data.group_name;
  }
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}

/** An endpoint's subscription (empty: every event) takes this type. */
export const subscribes = (events: readonly string[], type: EventType) => events.length === 0 || events.includes(type);
