/**
 * What a request needs to know before anything else, in one statement and one round trip: the
 * token's account (auth_version, state, groups, administrator, key and session still valid) and,
 * for the record API, the table's permission. A read that does not depend on who asks can ride
 * along in the same statement (a Ride).
 */
import type { Guarded } from '../permission/check';
import { Handle, op, Row, Tx } from './handle';

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

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
export function jsonRows(h: Handle, sql: string, columns: readonly string[]): string {
  if (h.dialect === 'postgres') return `(SELECT COALESCE(json_agg(j), '[]')::text FROM (${sql}) j)`;
  return `(SELECT json_group_array(json_object(${columns.map((c) => `'${c}', j."${c}"`).join(', ')})) FROM (${sql}) j)`;
}

export const parsedRows = (json: string | null): Row[] => (json === null ? [] : (JSON.parse(json) as Row[]));

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
  /** When the token's open session was last seen (ms; its "last used"), or null (no session). */
  sessionLastUsed: number | null;
  /** Whether the token's session was opened by a recovery link (it may add a passkey or a password, nothing else). */
  sessionRecovery: boolean;
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
    (SELECT MAX(s.last_used_at) FROM session s WHERE s.id = ? AND s.account_id = a.id AND s.ended_at IS NULL AND s.expires_at > ? AND s.auth_version = a.auth_version) AS session_ok,
    (SELECT COUNT(*) FROM session s WHERE s.id = ? AND s.method = 'recovery') AS recovery
  FROM user_account a
  LEFT JOIN membership m ON m.account_id = a.id
  LEFT JOIN usergroup g ON g.id = m.usergroup_id
  WHERE a.reference_id = ?`;

/** The groups the account is in through nesting (its direct ones come with AUTH_FACTS). */
const NESTED_GROUPS = `SELECT 'i' AS kind, a.id AS id, CAST(NULL AS INTEGER) AS auth_version, CAST(NULL AS BOOLEAN) AS disabled,
    c.ancestor_id AS group_id, CAST(NULL AS VARCHAR(32)) AS system_role, CAST(NULL AS INTEGER) AS permission, CAST(NULL AS INTEGER) AS owner_id,
    0 AS key_ok, 0 AS session_ok, 0 AS recovery
  FROM user_account a JOIN membership m ON m.account_id = a.id JOIN usergroup_closure c ON c.descendant_id = m.usergroup_id
  WHERE a.reference_id = ?`;

const TABLE_GUARD = `SELECT 'w' AS kind, w.id AS id, CAST(NULL AS INTEGER) AS auth_version, CAST(NULL AS BOOLEAN) AS disabled,
    rg.usergroup_id AS group_id, CAST(NULL AS VARCHAR(32)) AS system_role, w.permission AS permission, w.user_account_id AS owner_id,
    0 AS key_ok, 0 AS session_ok, 0 AS recovery
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
    parts.push(AUTH_FACTS, NESTED_GROUPS);
    const now = h.clock.now();
    params.push(subject.kid ?? '', now, subject.sid ?? '', now, subject.sid ?? '', subject.referenceId, subject.referenceId);
  }
  if (table !== null) {
    parts.push(TABLE_GUARD);
    params.push(table);
  }
  return parts.length === 0 ? null : { sql: parts.join('\nUNION ALL\n'), params };
}

function factsFrom(subject: TokenSubjectRef | null, rows: Row[]): RequestFacts {
  const facts: RequestFacts = {};
  const nested: number[] = [];
  for (const r of rows) {
    if (r.kind === 'a') {
      facts.account ??= {
        id: Number(r.id),
        referenceId: subject!.referenceId,
        authVersion: Number(r.auth_version),
        keyValid: subject!.kid === null || Number(r.key_ok) > 0,
        sessionValid: subject!.sid === null || (r.session_ok !== null && r.session_ok !== undefined),
        sessionLastUsed: subject!.sid === null || r.session_ok === null || r.session_ok === undefined ? null : Number(r.session_ok),
        sessionRecovery: Number(r.recovery) > 0,
        disabled: r.disabled === true || r.disabled === 1,
        groupIds: new Set(),
        isAdmin: false,
      };
      if (r.group_id !== null && r.group_id !== undefined) facts.account.groupIds.add(Number(r.group_id));
      // Administrators are named people: only a direct membership makes one (no group goes inside it).
      if (r.system_role === 'administrators') facts.account.isAdmin = true;
    } else if (r.kind === 'i') {
      nested.push(Number(r.group_id));
    } else if (r.kind === 'w') {
      facts.table ??= { permission: Number(r.permission), ownerId: num(r.owner_id), groupIds: [] };
      if (r.group_id !== null && r.group_id !== undefined) (facts.table.groupIds as number[]).push(Number(r.group_id));
    }
  }
  for (const id of nested) facts.account?.groupIds.add(id);
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
      : `SELECT f.*, CAST(NULL AS TEXT) AS ride FROM (${q.sql}) f UNION ALL SELECT 'r', ${'NULL, '.repeat(10)}${ride.sql}`;
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
