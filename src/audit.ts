/**
 * Security events: one JSON log line and one row in the audit table each, with the account's
 * reference_id, the front end (`via`) and the client. Callers pass only identifiers and reasons,
 * never a password, token or code. A failed audit write is logged and never fails the action it
 * describes. The webhook messages an event makes (deliveries/events.ts) are written in the same
 * transaction as its audit row: an endpoint hears of exactly what the audit log holds. Many
 * events (an import's) are recorded by recordAll, the same path a chunk at a time.
 */
import type { Actor } from './actor';
import type { AuditEvent } from './audit-events';
import type { LogFields, Logger } from './log';
import type { Clock } from './clock';
import type { Store } from './store/connection';
import type { Tx } from './store/handle';
import { appendAudit, AuditFilter, AuditRow, readAudit } from './store/audit';
import { enqueue, type NewDelivery } from './store/deliveries';
import { eventMessages, eventReads } from './deliveries/queue';
import type { AccountFacts } from './deliveries/events';

export type AuditFields = LogFields & { account: string | null };

/** One event of those an actor records together (recordAll): what record() takes, less the actor. */
export interface AuditEntry {
  event: AuditEvent;
  fields: AuditFields;
  level?: 'info' | 'warn';
  /** The account as it is or was, where the store cannot be asked (an account gone, or not yet committed). */
  about?: AccountFacts;
}

/** Events written together: one insert of their rows and one of their messages, in one transaction. */
const CHUNK = 500;

export class Audit {
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** Called after messages were queued (the local sender wakes at once). */
    private readonly queued: () => void = () => undefined,
  ) {}

  /** `about`: the account as it was, for an event about an account that is gone. */
  record(event: AuditEvent, actor: Actor, fields: AuditFields, level: 'info' | 'warn' = 'info', about?: AccountFacts): Promise<void> {
    return this.recordAll(actor, [{ event, fields, level, about }]);
  }

  /**
   * Many events of one actor (an import's thousands), each logged, stored and fanned out to
   * webhooks and SCIM targets exactly as record() does it alone (record is this with one), in
   * their order; written CHUNK at a time, so a large batch is a few statements, not one per event.
   */
  async recordAll(actor: Actor, entries: readonly AuditEntry[]): Promise<void> {
    for (let i = 0; i < entries.length; i += CHUNK) await this.write(actor, entries.slice(i, i + CHUNK));
  }

  /**
   * Events written inside the caller's transaction, with the change they describe: both are
   * stored or neither (a signup answered 200 always has its audit row). Their log lines and the
   * sender's wake-up wait for the commit: call what this returns once it is done.
   */
  async within(tx: Tx, actor: Actor, entries: readonly AuditEntry[]): Promise<() => void> {
    const { rows, lines } = this.rows(actor, entries);
    const messages = await this.messages(tx, actor, entries);
    await appendAudit(tx, rows);
    if (messages.length > 0) await enqueue(tx, messages);
    return () => {
      for (const [level, event, line] of lines) this.logger[level](event, line);
      if (messages.length > 0) this.queued();
    };
  }

  /** The rows of `entries` and their log lines. */
  private rows(actor: Actor, entries: readonly AuditEntry[]) {
    const by = actor.principal.referenceId;
    const lines: Array<['info' | 'warn', AuditEvent, LogFields]> = [];
    const rows = entries.map(({ event, fields, level = 'info' }) => {
      const line: LogFields = {
        ...fields,
        via: actor.via,
        client: actor.client ?? undefined,
        by: by !== null && by !== fields.account ? by : undefined,
        scim_token: actor.scimToken,
      };
      lines.push([level, event, line]);
      const { account, client, ...rest } = line;
      return {
        event,
        account: (account as string | null) ?? null,
        client: (client as string | undefined) ?? null,
        details: Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
      };
    });
    return { rows, lines };
  }

  /** The webhook and SCIM messages `entries` make (the endpoints and targets read once). */
  private async messages(on: Tx, actor: Actor, entries: readonly AuditEntry[]): Promise<NewDelivery[]> {
    const reads = eventReads(on);
    const messages: NewDelivery[] = [];
    for (const { event, fields, about } of entries) messages.push(...(await eventMessages(reads, this.clock, event, actor, fields, about)));
    return messages;
  }

  private async write(actor: Actor, entries: readonly AuditEntry[]): Promise<void> {
    const { rows, lines } = this.rows(actor, entries);
    for (const [level, event, line] of lines) this.logger[level](event, line);
    try {
      const messages = await this.messages(this.store.root, actor, entries);
      if (messages.length === 0) return await appendAudit(this.store.root, rows);
      await this.store.transaction(async (tx) => {
        await appendAudit(tx, rows);
        await enqueue(tx, messages);
      });
      this.queued();
    } catch (err) {
      // What fails here is the store (a read or the one transaction): every event of the chunk
      // is then unwritten, and each is logged as such, as it would have been alone.
      for (const { event } of entries) this.logger.error('audit_write_failed', { event, error: (err as { code?: string }).code ?? 'error' });
    }
  }

  query(filter: AuditFilter): Promise<AuditRow[]> {
    return readAudit(this.store.root, filter);
  }
}
