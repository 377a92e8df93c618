/**
 * "May this principal read these rows" as SQL: the twin of can() (permission/check.ts) evaluated
 * per row, for lists (a property test, test/store/permission-sql.test.ts, holds the two to the
 * same answers); with filters served by trigram indexes and totals counted a bounded way ahead.
 */
import { bit, Operation } from '../permission/bits';
import type { Principal } from '../permission/check';
import { Handle, op, Row } from './handle';
import { decodeRow } from './schema';
import { ident, type GuardedTable } from './guarded-rows';
import { TRIGRAM_INDEXED } from './trigrams';

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** "principal may `op` rows of t" as SQL: the same rule as can(), evaluated per row. */
export function permittedSql(table: GuardedTable, principal: Principal, operation: Operation): { sql: string; params: unknown[] } {
  if (principal.isAdmin) return { sql: '1 = 1', params: [] };
  const parts = ['(t.permission & ?) <> 0'];
  const params: unknown[] = [bit('guest', operation)];
  if (principal.accountId !== null) {
    parts.push('(t.user_account_id = ? AND (t.permission & ?) <> 0)');
    params.push(principal.accountId, bit('owner', operation));
    const groups = [...principal.groupIds];
    if (groups.length > 0) {
      const self = table === 'usergroup' ? ` OR t.id IN (${marks(groups.length)})` : '';
      parts.push(
        `((t.permission & ?) <> 0 AND (EXISTS (SELECT 1 FROM record_usergroup rgp WHERE rgp.record_type = ? AND rgp.record_id = t.id AND rgp.usergroup_id IN (${marks(groups.length)}))${self}))`,
      );
      params.push(bit('group', operation), table, ...groups, ...(self ? groups : []));
    }
  }
  return { sql: `(${parts.join(' OR ')})`, params };
}

export interface ListQuery {
  table: GuardedTable;
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

/** Past this many trigram candidates a pattern is common, and reading in page order finds its rows sooner. */
export const TRIGRAM_CANDIDATES = 2000;

/**
 * On SQLite, the ids of rows whose filtered columns may contain `text`, from the table's FTS5
 * trigram index (migrations/20261124000000_filter_trigrams.ts): a superset, since the index
 * folds case more widely than lower(), so the exact match still follows. Null when the index
 * cannot help: text under three characters (no trigram), a table without one, or a pattern so
 * common that it has more than TRIGRAM_CANDIDATES rows. PostgreSQL's planner makes this choice
 * itself from pg_trgm's statistics (PgStatements plans LIKE statements with their values).
 */
async function trigramCandidates(h: Handle, table: GuardedTable, columns: readonly string[], text: string): Promise<number[] | null> {
  if (h.dialect !== 'sqlite' || TRIGRAM_INDEXED[table]?.join() !== columns.join() || [...text].length < 3) return null;
  const fts = `${table}_fts`; // table: one of GuardedTable, never from input
  // A quoted FTS5 phrase: its trigrams in a row, i.e. a substring.
  const rows = await h.all(`SELECT rowid AS id FROM ${fts} WHERE ${fts} MATCH ? LIMIT ?`, [`"${text.replace(/"/g, '""')}"`, TRIGRAM_CANDIDATES + 1]);
  return rows.length > TRIGRAM_CANDIDATES ? null : rows.map((r) => Number(r.id));
}

/**
 * "One of `columns` holds `text`" (case ignored, literal), as SQL over alias t: the record
 * list's filter= and the console's account search. On SQLite the trigram candidates narrow the
 * rows first when they can; the exact match always follows.
 */
export async function filterSql(h: Handle, table: GuardedTable, columns: readonly string[], filter: string): Promise<{ sql: string; params: unknown[] }> {
  const text = filter.toLowerCase();
  const candidates = await trigramCandidates(h, table, columns, text);
  const narrowed = candidates ? ' AND t.id IN (SELECT value FROM json_each(?))' : '';
  const pattern = likePattern(text);
  return {
    sql: `${narrowed} AND (${columns.map((c) => `lower(t.${ident(table, c)}) LIKE ? ESCAPE '!'`).join(' OR ')})`,
    params: [...(candidates ? [JSON.stringify(candidates)] : []), ...columns.map(() => pattern)],
  };
}

/**
 * How far past the page a total is counted. A count over a whole table would make every full
 * page cost as much as the table is large; beyond this, the total is a lower bound.
 */
export const COUNT_AHEAD = 10_000;

/**
 * The page of rows the principal may read that match, and their total: counted only when the
 * page is full or past the first (a first page with room to spare holds them all), and then at
 * most COUNT_AHEAD rows past the page (`exact` says whether the count got to the end).
 */
export const listReadable = op(async (h, l: ListQuery): Promise<{ rows: Row[]; total: number; exact: boolean }> => {
  const permitted = permittedSql(l.table, l.principal, 'read');
  let where = permitted.sql;
  const params = [...permitted.params];
  if (l.filter && l.filter.text !== '') {
    const filtered = await filterSql(h, l.table, l.filter.columns, l.filter.text);
    where += filtered.sql;
    params.push(...filtered.params);
  }
  const order = [...l.sort.map((s) => `t.${ident(l.table, s.column)} ${s.order === 'desc' ? 'DESC' : 'ASC'}`), 't.id ASC'].join(', ');
  const rows = await h.all(`SELECT t.* FROM ${ident(l.table)} t WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, l.limit, l.offset]);
  const decoded = rows.map((r) => decodeRow<Row>(l.table, r));
  if (l.offset === 0 && rows.length < l.limit) return { rows: decoded, total: rows.length, exact: true };
  const bound = l.offset + l.limit + COUNT_AHEAD;
  const counted = Number((await h.all(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${ident(l.table)} t WHERE ${where} LIMIT ?) c`, [...params, bound]))[0].n);
  return { rows: decoded, total: counted, exact: counted < bound };
});
