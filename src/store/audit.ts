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

export const appendAudit = op(async (h, row: Omit<AuditRow, 'id' | 'created_at'>): Promise<void> => {
  await h.k('audit_event').insert({ ...row, created_at: h.clock.now(), details: JSON.stringify(row.details) });
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
