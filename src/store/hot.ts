/**
 * The queries every authenticated request makes, as hand-written SQL run through Store.read
 * (prepared once per connection). Identifiers come only from the record types' allow-lists;
 * every value is a bound parameter.
 */
import { bit, Operation } from '../permission/bits';
import type { Guarded, Principal } from '../permission/check';
import type { Store } from './connection';
import type { AuthFacts } from './accounts';
import { normalizeRow } from './rows';

const q = (identifier: string) => `"${identifier.replace(/"/g, '')}"`;
const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

const AUTH_FACTS = `SELECT 'a' AS kind, a.id AS id, a.auth_version AS auth_version, a.disabled AS disabled,
    m.usergroup_id AS group_id, g.system_role AS system_role, CAST(NULL AS INTEGER) AS permission, CAST(NULL AS INTEGER) AS owner_id
  FROM user_account a
  LEFT JOIN membership m ON m.account_id = a.id
  LEFT JOIN usergroup g ON g.id = m.usergroup_id
  WHERE a.reference_id = ?`;

const TABLE_GUARD = `SELECT 'w' AS kind, w.id AS id, CAST(NULL AS INTEGER) AS auth_version, CAST(NULL AS BOOLEAN) AS disabled,
    rg.usergroup_id AS group_id, CAST(NULL AS VARCHAR(32)) AS system_role, w.permission AS permission, w.user_account_id AS owner_id
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
export async function readRequestFacts(store: Store, referenceId: string | null, table: string | null): Promise<RequestFacts> {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (referenceId !== null) parts.push(AUTH_FACTS), params.push(referenceId);
  if (table !== null) parts.push(TABLE_GUARD), params.push(table);
  if (parts.length === 0) return {};
  const rows = await store.read(parts.join('\nUNION ALL\n'), params);
  const facts: RequestFacts = {};
  for (const r of rows) {
    if (r.kind === 'a') {
      facts.account ??= {
        id: Number(r.id),
        referenceId: referenceId!,
        authVersion: Number(r.auth_version),
        disabled: r.disabled === true || r.disabled === 1,
        groupIds: new Set(),
        isAdmin: false,
      };
      if (r.group_id !== null && r.group_id !== undefined) facts.account.groupIds.add(Number(r.group_id));
      if (r.system_role === 'administrators') facts.account.isAdmin = true;
    } else {
      facts.table ??= { permission: Number(r.permission), ownerId: r.owner_id === null || r.owner_id === undefined ? null : Number(r.owner_id), groupIds: [] };
      if (r.group_id !== null && r.group_id !== undefined) (facts.table.groupIds as number[]).push(Number(r.group_id));
    }
  }
  return facts;
}

/** One row by reference_id with the groups it belongs to (a group row belongs to itself). */
export async function readGuarded(store: Store, table: string, where: { column: 'reference_id' | 'table_name'; value: string }) {
  const rows = await store.read(
    `SELECT t.*, rg.usergroup_id AS rg_usergroup_id FROM ${q(table)} t
     LEFT JOIN record_usergroup rg ON rg.record_type = ? AND rg.record_id = t.id
     WHERE t.${q(where.column)} = ?`,
    [table, where.value],
  );
  if (rows.length === 0) return undefined;
  const groupIds: number[] = table === 'usergroup' ? [Number(rows[0].id)] : [];
  for (const r of rows) if (r.rg_usergroup_id !== null && r.rg_usergroup_id !== undefined) groupIds.push(Number(r.rg_usergroup_id));
  const { rg_usergroup_id: _drop, ...raw } = rows[0];
  void _drop;
  const row = normalizeRow<Record<string, unknown> & { id: number; permission: number; user_account_id: number | null }>(raw);
  const guard: Guarded = { permission: Number(row.permission), ownerId: row.user_account_id === null ? null : Number(row.user_account_id), groupIds };
  return { row, guard };
}

/** An action row's permission facts (for the checks made before any expensive work). */
export async function readActionGuard(store: Store, onType: string, name: string): Promise<Guarded | undefined> {
  const rows = await store.read(
    `SELECT t.permission, t.user_account_id, rg.usergroup_id FROM action t
     LEFT JOIN record_usergroup rg ON rg.record_type = 'action' AND rg.record_id = t.id
     WHERE t.on_type = ? AND t.action_name = ?`,
    [onType, name],
  );
  if (rows.length === 0) return undefined;
  const groupIds = rows.filter((r) => r.usergroup_id !== null && r.usergroup_id !== undefined).map((r) => Number(r.usergroup_id));
  const owner = rows[0].user_account_id;
  return { permission: Number(rows[0].permission), ownerId: owner === null || owner === undefined ? null : Number(owner), groupIds };
}

/** Whether an account uses this email key (a fast pre-check; the transaction re-checks). */
export async function emailKeyTaken(store: Store, emailKey: string): Promise<boolean> {
  return (await store.read('SELECT 1 AS one FROM user_account WHERE email_key = ?', [emailKey])).length > 0;
}

/** "principal may `op` rows of t" as SQL (the same rule as can(), evaluated per row). */
export function permittedSql(table: string, principal: Principal, op: Operation): { sql: string; params: unknown[] } {
  if (principal.isAdmin) return { sql: '1 = 1', params: [] };
  const parts = ['(t.permission & ?) <> 0'];
  const params: unknown[] = [bit('guest', op)];
  if (principal.accountId !== null) {
    parts.push('(t.user_account_id = ? AND (t.permission & ?) <> 0)');
    params.push(principal.accountId, bit('owner', op));
    const groups = [...principal.groupIds];
    if (groups.length > 0) {
      const self = table === 'usergroup' ? ` OR t.id IN (${marks(groups.length)})` : '';
      parts.push(
        `((t.permission & ?) <> 0 AND (EXISTS (SELECT 1 FROM record_usergroup rgp WHERE rgp.record_type = ? AND rgp.record_id = t.id AND rgp.usergroup_id IN (${marks(groups.length)}))${self}))`,
      );
      params.push(bit('group', op), table, ...groups, ...(self ? groups : []));
    }
  }
  return { sql: `(${parts.join(' OR ')})`, params };
}

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

/**
 * The page of readable, matching rows, and their total: counted only when the page is full or
 * past the first (a first page with room to spare holds them all).
 */
export async function listReadable(store: Store, l: ListQuery): Promise<{ rows: Array<Record<string, unknown>>; total: number }> {
  const permitted = permittedSql(l.table, l.principal, 'read');
  let where = permitted.sql;
  const params = [...permitted.params];
  if (l.filter && l.filter.text !== '') {
    where += ` AND (${l.filter.columns.map((c) => `lower(t.${q(c)}) LIKE ? ESCAPE '!'`).join(' OR ')})`;
    const pattern = likePattern(l.filter.text.toLowerCase());
    for (let i = 0; i < l.filter.columns.length; i++) params.push(pattern);
  }
  const order = [...l.sort.map((s) => `t.${q(s.column)} ${s.order === 'desc' ? 'DESC' : 'ASC'}`), 't.id ASC'].join(', ');
  const rows = await store.read(`SELECT t.* FROM ${q(l.table)} t WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, l.limit, l.offset]);
  const total =
    l.offset === 0 && rows.length < l.limit
      ? rows.length
      : Number((await store.read(`SELECT COUNT(*) AS n FROM ${q(l.table)} t WHERE ${where}`, params))[0].n);
  return { rows: rows.map((r) => normalizeRow<Record<string, unknown>>(r)), total };
}
