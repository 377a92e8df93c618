/** The audit table: appended by every security event, read by `gatehouse audit`. */
import { op } from './handle';
import { decodeRow } from './schema';

export interface AuditRow {
  id: number;
  created_at: number;
  event: string;
  account: string | null;
  client: string | null;
  details: Record<string, unknown>;
}

/** Rows of one insert: knex writes SQLite's as a compound SELECT, of at most 500 terms. */
const ROWS_PER_INSERT = 500;

/** Appends rows in their order, one insert for up to ROWS_PER_INSERT of them (the audit of a batch, audit.ts). */
export const appendAudit = op(async (h, rows: ReadonlyArray<Omit<AuditRow, 'id' | 'created_at'>>): Promise<void> => {
  const now = h.clock.now();
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
    await h.k('audit_event').insert(rows.slice(i, i + ROWS_PER_INSERT).map((row) => ({ ...row, created_at: now, details: JSON.stringify(row.details) })));
});

export interface AuditFilter {
  since?: number;
  account?: string;
  /** One event name, exactly (signin_failed, passkey_added, …). */
  event?: string;
  limit: number;
}

export const readAudit = op(async (h, filter: AuditFilter): Promise<AuditRow[]> => {
  const q = h.k('audit_event').orderBy('id', 'desc').limit(filter.limit);
  if (filter.since !== undefined) q.where('created_at', '>=', filter.since);
  if (filter.account !== undefined) q.where('account', filter.account);
  if (filter.event !== undefined) q.where('event', filter.event);
  const rows: Array<Record<string, unknown>> = await q;
  return rows.reverse().map((r) => {
    const row = decodeRow<Omit<AuditRow, 'details'> & { details: string }>('audit_event', r);
    return { ...row, details: JSON.parse(row.details) as Record<string, unknown> };
  });
});
