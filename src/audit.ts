/**
 * Security events: one JSON log line and one row in the audit table each, with the account's
 * reference_id. Callers pass only identifiers and reasons, never a password, token or code.
 * A failed audit write is logged and never fails the action it describes.
 */
import type { LogFields, Logger } from './log';
import type { Store } from './store/connection';
import { appendAudit } from './store/audit';

export type AuditFields = LogFields & { account: string | null; client?: string };

export class Audit {
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  async record(event: string, fields: AuditFields, level: 'info' | 'warn' = 'info'): Promise<void> {
    this.logger[level](event, fields);
    const { account, client, ...details } = fields;
    try {
      await appendAudit(this.store.knex, {
        created_at: Date.now(),
        event,
        account: account ?? null,
        client: client ?? null,
        details: Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined)),
      });
    } catch (err) {
      this.logger.error('audit_write_failed', { event, error: (err as { code?: string }).code ?? 'error' });
    }
  }
}
