/**
 * The permission facts of rows, read in one way whether inside a transaction or on the hot
 * path (the SQL is written once; the handle decides where it runs): a row's permission, owner
 * and groups; the caller's account facts; and "may read" as SQL for lists, the twin of can()
 * (a property test holds the two to the same answers).
 */
import { bit, Operation } from '../permission/bits';
import type { Guarded, Principal } from '../permission/check';
import { Handle, op, open, Row, Tx } from './handle';
import { decodeRow, SCHEMA, TableName } from './schema';
import { TRIGRAM_INDEXED } from '../../migrations/20261124000000_filter_trigrams';

/** An allow-listed identifier, quoted. Anything not in the schema is a programming error. */
export function ident(table: TableName, column?: string): string {
  if (!Object.hasOwn(SCHEMA, table)) throw new Error(`unknown table ${table}`);
  if (column !== undefined && !Object.hasOwn(SCHEMA[table], column)) throw new Error(`unknown column ${table}.${column}`);
  return `"${column ?? table}"`;
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export type GuardedTable = 'user_account' | 'usergroup' | 'membership' | 'world' | 'action';

export interface GuardedRow<T> {
  row: T;
  guard: Guarded;
}

/** The statement of one row (by unique columns) with the groups it is shared with. */
function guardedRowSql(table: GuardedTable, where: Readonly<Record<string, string>>): { sql: string; params: unknown[] } {
  const columns = Object.keys(where);
  return {
    sql: `SELECT t.*, rg.usergroup_id AS rg_usergroup_id FROM ${ident(table)} t
     LEFT JOIN record_usergroup rg ON rg.record_type = ? AND rg.record_id = t.id
     WHERE ${columns.map((c) => `t.${ident(table, c)} = ?`).join(' AND ')}`,
    params: [table, ...columns.map((c) => where[c])],
  };
}

/** The row and its guard (a group row belongs to itself), from guardedRowSql's rows. */
function guardedFrom<T>(table: GuardedTable, rows: Row[]): GuardedRow<T> | undefined {
  if (rows.length === 0) return undefined;
  const { rg_usergroup_id: _shared, ...raw } = rows[0];
  void _shared;
  const row = decodeRow<T & { id: number; permission: number; user_account_id: number | null }>(table, raw);
  const groupIds: number[] = table === 'usergroup' ? [row.id] : [];
  for (const r of rows) if (r.rg_usergroup_id !== null && r.rg_usergroup_id !== undefined) groupIds.push(Number(r.rg_usergroup_id));
  return { row, guard: { permission: row.permission, ownerId: row.user_account_id, groupIds } };
}

/** One row (by unique columns) with the groups it is shared with (a group row belongs to itself). */
async function readGuardedRow<T>(h: Handle, table: GuardedTable, where: Readonly<Record<string, string>>): Promise<GuardedRow<T> | undefined> {
  const q = guardedRowSql(table, where);
  return guardedFrom<T>(table, await h.all(q.sql, q.params));
}

export function readGuarded<T>(tx: Tx, table: GuardedTable, where: Readonly<Record<string, string>>): Promise<GuardedRow<T> | undefined> {
  return op(readGuardedRow<T>)(tx, table, where);
}

/**
 * A read that rides along in the statement of a request's facts (readRequestFactsWith): its rows
 * come back as one JSON text value, so the token check and the read are one statement and one
 * round trip to the store instead of two. `decode` turns that text into the read's answer.
 */
export interface Ride<T> {
  readonly sql: string;
  readonly params: readonly unknown[];
  decode(json: string | null): Promise<T>;
}

/**
 * `sql`'s rows as one JSON array (text), a scalar subquery; `columns` are its column names
 * (allow-listed identifiers). The order of the rows is not kept (the rides read one row).
 */
function jsonRows(h: Handle, sql: string, columns: readonly string[]): string {
  if (h.dialect === 'postgres') return `(SELECT COALESCE(json_agg(j), '[]')::text FROM (${sql}) j)`;
  return `(SELECT json_group_array(json_object(${columns.map((c) => `'${c}', j."${c}"`).join(', ')})) FROM (${sql}) j)`;
}

const parsed = (json: string | null): Row[] => (json === null ? [] : (JSON.parse(json) as Row[]));

/** readGuarded as a Ride: the row does not depend on who asks, so it can be read with the token's facts. */
export function guardedRide<T>(tx: Tx, table: GuardedTable, where: Readonly<Record<string, string>>): Ride<GuardedRow<T> | undefined> {
  const q = guardedRowSql(table, where);
  return {
    sql: jsonRows(open(tx), q.sql, [...Object.keys(SCHEMA[table]), 'rg_usergroup_id']),
    params: q.params,
    decode: async (json) => guardedFrom<T>(table, parsed(json)),
  };
}

/** A record type's table-level row (its world row). */
export const readWorld = op(async (h, table: string) => {
  const world = await readGuardedRow<WorldRow>(h, 'world', { table_name: table });
  if (!world) throw new Error(`record type ${table} has no world row: the store was not migrated`);
  return world;
});

export const readAction = op((h, onType: string, name: string) => readGuardedRow<ActionRow>(h, 'action', { on_type: onType, action_name: name }));

export interface WorldRow {
  id: number;
  reference_id: string;
  table_name: string;
  permission: number;
  default_permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface ActionRow {
  id: number;
  reference_id: string;
  on_type: string;
  action_name: string;
  label: string;
  permission: number;
  user_account_id: number | null;
  created_at: number;
  updated_at: number;
}

/** What an authenticated request needs, in one query: version, state, groups, admin-ness, key. */
export interface AuthFacts {
  id: number;
  referenceId: string;
  authVersion: number;
  disabled: boolean;
  groupIds: Set<number>;
  isAdmin: boolean;
  /** Whether the key that signed the token still verifies (a retired key stops at once). */
  keyValid: boolean;
  /** Whether the token's session is open (not ended or expired, of the current auth_version). */
  sessionValid: boolean;
}

/** Who a token names, and the key that signed it (null: the legacy HS256 secret). */
export interface TokenSubjectRef {
  referenceId: string;
  kid: string | null;
  /** The token's session; null only for HS256 tokens of an upgraded store. */
  sid: string | null;
}

const AUTH_FACTS = `SELECT 'a' AS kind, a.id AS id, a.auth_version AS auth_version, a.disabled AS disabled,
    m.usergroup_id AS group_id, g.system_role AS system_role, CAST(NULL AS INTEGER) AS permission, CAST(NULL AS INTEGER) AS owner_id,
    (SELECT COUNT(*) FROM signing_key k WHERE k.kid = ? AND (k.verify_until IS NULL OR k.verify_until > ?)) AS key_ok,
    (SELECT COUNT(*) FROM session s WHERE s.id = ? AND s.account_id = a.id AND s.ended_at IS NULL AND s.expires_at > ? AND s.auth_version = a.auth_version) AS session_ok
  FROM user_account a
  LEFT JOIN membership m ON m.account_id = a.id
  LEFT JOIN usergroup g ON g.id = m.usergroup_id
  WHERE a.reference_id = ?`;

const TABLE_GUARD = `SELECT 'w' AS kind, w.id AS id, CAST(NULL AS INTEGER) AS auth_version, CAST(NULL AS BOOLEAN) AS disabled,
    rg.usergroup_id AS group_id, CAST(NULL AS VARCHAR(32)) AS system_role, w.permission AS permission, w.user_account_id AS owner_id,
    0 AS key_ok, 0 AS session_ok
  FROM world w
  LEFT JOIN record_usergroup rg ON rg.record_type = 'world' AND rg.record_id = w.id
  WHERE w.table_name = ?`;

export interface RequestFacts {
  account?: AuthFacts;
  /** The table-level permission of a record type (its world row). */
  table?: Guarded;
}

/**
 * The facts a request needs before anything else, in one round trip: the token's account
 * (auth_version, state, groups) and, for record API requests, the table's permission.
 */
/** The facts statement (null when there is nothing to ask: a guest outside the record API). */
function factsStatement(h: Handle, subject: TokenSubjectRef | null, table: string | null): { sql: string; params: unknown[] } | null {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (subject !== null) {
    parts.push(AUTH_FACTS);
    const now = h.clock.now();
    params.push(subject.kid ?? '', now, subject.sid ?? '', now, subject.referenceId);
  }
  if (table !== null) {
    parts.push(TABLE_GUARD);
    params.push(table);
  }
  return parts.length === 0 ? null : { sql: parts.join('\nUNION ALL\n'), params };
}

function factsFrom(subject: TokenSubjectRef | null, rows: Row[]): RequestFacts {
  const facts: RequestFacts = {};
  for (const r of rows) {
    if (r.kind === 'a') {
      facts.account ??= {
        id: Number(r.id),
        referenceId: subject!.referenceId,
        authVersion: Number(r.auth_version),
        keyValid: subject!.kid === null || Number(r.key_ok) > 0,
        sessionValid: subject!.sid === null || Number(r.session_ok) > 0,
        disabled: r.disabled === true || r.disabled === 1,
        groupIds: new Set(),
        isAdmin: false,
      };
      if (r.group_id !== null && r.group_id !== undefined) facts.account.groupIds.add(Number(r.group_id));
      if (r.system_role === 'administrators') facts.account.isAdmin = true;
    } else if (r.kind === 'w') {
      facts.table ??= { permission: Number(r.permission), ownerId: num(r.owner_id), groupIds: [] };
      if (r.group_id !== null && r.group_id !== undefined) (facts.table.groupIds as number[]).push(Number(r.group_id));
    }
  }
  return facts;
}

/**
 * The facts a request needs before anything else, in one round trip: the token's account
 * (auth_version, state, groups) and, for record API requests, the table's permission.
 */
export const readRequestFacts = op(async (h, subject: TokenSubjectRef | null, table: string | null): Promise<RequestFacts> => {
  const q = factsStatement(h, subject, table);
  return q === null ? {} : factsFrom(subject, await h.all(q.sql, q.params));
});

/** The facts and one more read (a Ride), in one statement: the ride is a last row of kind 'r'. */
const readFactsAndRide = op(async (h, subject: TokenSubjectRef | null, table: string | null, ride: Ride<unknown>) => {
  const q = factsStatement(h, subject, table);
  const sql =
    q === null
      ? `SELECT 'r' AS kind, ${ride.sql} AS ride`
      : `SELECT f.*, CAST(NULL AS TEXT) AS ride FROM (${q.sql}) f UNION ALL SELECT 'r', ${'NULL, '.repeat(9)}${ride.sql}`;
  const rows = await h.all(sql, [...(q?.params ?? []), ...ride.params]);
  const r = rows.find((row) => row.kind === 'r');
  return { facts: factsFrom(subject, rows), json: r?.ride === null || r?.ride === undefined ? null : String(r.ride) };
});

export async function readRequestFactsWith<T>(
  tx: Tx,
  subject: TokenSubjectRef | null,
  table: string | null,
  ride: Ride<T>,
): Promise<{ facts: RequestFacts; value: T }> {
  const { facts, json } = await readFactsAndRide(tx, subject, table, ride as Ride<unknown>);
  return { facts, value: await ride.decode(json) };
}

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
    const text = l.filter.text.toLowerCase();
    const candidates = await trigramCandidates(h, l.table, l.filter.columns, text);
    if (candidates) {
      where += ' AND t.id IN (SELECT value FROM json_each(?))';
      params.push(JSON.stringify(candidates));
    }
    where += ` AND (${l.filter.columns.map((c) => `lower(t.${ident(l.table, c)}) LIKE ? ESCAPE '!'`).join(' OR ')})`;
    const pattern = likePattern(text);
    for (let i = 0; i < l.filter.columns.length; i++) params.push(pattern);
  }
  const order = [...l.sort.map((s) => `t.${ident(l.table, s.column)} ${s.order === 'desc' ? 'DESC' : 'ASC'}`), 't.id ASC'].join(', ');
  const rows = await h.all(`SELECT t.* FROM ${ident(l.table)} t WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, l.limit, l.offset]);
  const decoded = rows.map((r) => decodeRow<Row>(l.table, r));
  if (l.offset === 0 && rows.length < l.limit) return { rows: decoded, total: rows.length, exact: true };
  const bound = l.offset + l.limit + COUNT_AHEAD;
  const counted = Number((await h.all(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${ident(l.table)} t WHERE ${where} LIMIT ?) c`, [...params, bound]))[0].n);
  return { rows: decoded, total: counted, exact: counted < bound };
});
