/**
 * Security events: one JSON log line and one row in the audit table each, with the account's
 * reference_id, the front end (`via`) and the client. Callers pass only identifiers and reasons,
 * never a password, token or code. A failed audit write is logged and never fails the action it
 * describes. The webhook messages an event makes (deliveries/events.ts) are written in the same
 * transaction as its audit row: an endpoint hears of exactly what the audit log holds.
 */
import type { Actor } from './actor';
import type { AuditEvent } from './audit-events';
import type { LogFields, Logger } from './log';
import type { Clock } from './clock';
import type { Store } from './store/connection';
import { appendAudit, AuditFilter, AuditRow, readAudit } from './store/audit';
import { enqueue } from './store/deliveries';
import { eventMessages } from './deliveries/queue';
import type { AccountFacts } from './deliveries/events';

export type AuditFields = LogFields & { account: string | null };

export class Audit {
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** Called after messages were queued (the local sender wakes at once). */
    private readonly queued: () => void = () => undefined,
  ) {}

  /** `about`: the account as it was, for an event about an account that is gone. */
  async record(event: AuditEvent, actor: Actor, fields: AuditFields, level: 'info' | 'warn' = 'info', about?: AccountFacts): Promise<void> {
    const by = actor.principal.referenceId;
    const line: LogFields = {
      ...fields,
      via: actor.via,
      client: actor.client ?? undefined,
      by: by !== null && by !== fields.account ? by : undefined,
      scim_token: actor.scimToken,
    };
    this.logger[level](event, line);
    const { account, client, ...rest } = line;
    const row = {
      event,
      account: (account as string | null) ?? null,
      client: (client as string | undefined) ?? null,
      details: Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
    };
    try {
      const messages = await eventMessages(this.store, this.clock, event, actor, fields, about);
      if (messages.length === 0) return await appendAudit(this.store.root, row);
      await this.store.transaction(async (tx) => {
        await appendAudit(tx, row);
        await enqueue(tx, messages);
      });
      this.queued();
    } catch (err) {
      this.logger.error('audit_write_failed', { event, error: (err as { code?: string }).code ?? 'error' });
    }
  }

  query(filter: AuditFilter): Promise<AuditRow[]> {
    return readAudit(this.store.root, filter);
  }
}
