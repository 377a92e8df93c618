/** Generic record queries for the JSON:API: filtered, permission-limited, paged lists. */
import type { Principal } from '../permission/check';
import type { Db } from './connection';
import { wherePermitted } from './guards';
import { normalizeRow } from './rows';

export interface ListQuery {
  table: string;
  principal: Principal;
  filter?: { text: string; columns: readonly string[] };
  sort: ReadonlyArray<{ column: string; order: 'asc' | 'desc' }>;
  limit: number;
  offset: number;
}

/** `%`, `_` and the escape character itself match literally. */
export function likePattern(text: string): string {
  return '%' + text.replace(/[!%_]/g, (c) => '!' + c) + '%';
}

export async function listRecords(db: Db, q: ListQuery): Promise<{ rows: Array<Record<string, unknown>>; total: number }> {
  const base = () => {
    const qb = db(q.table);
    wherePermitted(qb, q.table, q.principal, 'read');
    if (q.filter && q.filter.text !== '') {
      const pattern = likePattern(q.filter.text.toLowerCase());
      const columns = q.filter.columns;
      qb.where(function () {
        for (const column of columns) this.orWhereRaw(`lower(??) like ? escape '!'`, [`${q.table}.${column}`, pattern]);
      });
    }
    return qb;
  };
  const countRow = await base().count({ n: '*' }).first();
  const query = base().select(`${q.table}.*`).limit(q.limit).offset(q.offset);
  for (const s of q.sort) query.orderBy(`${q.table}.${s.column}`, s.order);
  query.orderBy(`${q.table}.id`, 'asc'); // stable paging
  const rows = await query;
  return { rows: rows.map((r: Record<string, unknown>) => normalizeRow<Record<string, unknown>>(r)), total: Number(countRow?.n ?? 0) };
}
