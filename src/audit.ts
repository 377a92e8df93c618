/**
 * Security events: one JSON log line and one row in the audit table each, with the account's
 * reference_id, the front end (`via`) and the client. Callers pass only identifiers and reasons,
 * never a password, token or code. A failed audit write is logged and never fails the action it
 * describes.
 */
import type { Actor } from './actor';
import type { LogFields, Logger } from './log';
import type { Store } from './store/connection';
import { appendAudit, AuditFilter, AuditRow, readAudit } from './store/audit';

export type AuditFields = LogFields & { account: string | null };

export class Audit {
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async record(event: string, actor: Actor, fields: AuditFields, level: 'info' | 'warn' = 'info'): Promise<void> {
    const by = actor.principal.referenceId;
    const line: LogFields = { ...fields, via: actor.via, client: actor.client ?? undefined, by: by !== null && by !== fields.account ? by : undefined };
    this.logger[level](event, line);
    const { account, client, ...rest } = line;
    try {
      await appendAudit(this.store.root, {
        event,
        account: (account as string | null) ?? null,
        client: (client as string | undefined) ?? null,
        details: Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
      });
    } catch (err) {
      this.logger.error('audit_write_failed', { event, error: (err as { code?: string }).code ?? 'error' });
    }
  }

  query(filter: AuditFilter): Promise<AuditRow[]> {
    return readAudit(this.store.root, filter);
  }
}
