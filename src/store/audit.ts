/** The audit table: appended by every security event, read by `gatehouse audit`. */
import type { Db } from './connection';

export interface AuditRow {
  id: number;
  created_at: number;
  event: string;
  account: string | null;
  client: string | null;
  details: Record<string, unknown>;
}

export async function appendAudit(db: Db, row: Omit<AuditRow, 'id'>): Promise<void> {
  await db('audit_event').insert({ ...row, details: JSON.stringify(row.details) });
}

export async function readAudit(db: Db, filter: { since?: number; account?: string; limit: number }): Promise<AuditRow[]> {
  const q = db('audit_event').orderBy('id', 'desc').limit(filter.limit);
  if (filter.since !== undefined) q.where('created_at', '>=', filter.since);
  if (filter.account !== undefined) q.where('account', filter.account);
  const rows: Array<Record<string, unknown>> = await q;
  return rows.reverse().map((r) => ({
    id: Number(r.id),
    created_at: Number(r.created_at),
    event: String(r.event),
    account: (r.account as string | null) ?? null,
    client: (r.client as string | null) ?? null,
    details: JSON.parse(String(r.details)) as Record<string, unknown>,
  }));
}
