/** The OpenID Connect provider's state and clients. */
import { atomically, type ClaimMany, type Handle, op, type Tx } from './handle';
import { decodeRow } from './schema';
import { sharedSecret } from './keys';
import { managedGroupSql } from './groups';
import { memberGroupsSql } from './nesting';

export interface OidcPayloadRow {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  client_id: string | null;
  account: string | null;
  auth_version: number | null;
  expires_at: number | null;
  consumed_at: number | null;
  /** A DeviceCode's user code (normalized: the letters only). */
  user_code: string | null;
}

export interface OidcClientRow {
  client_id: string;
  name: string;
  metadata: string;
  client_secret: string | null;
  first_party: boolean;
  allowed_groups: string;
  created_at: number;
  /** Sign-ins need a second factor (step-up). */
  two_factor: boolean;
}

/**
 * Writes a payload; the account's auth_version is read in the same statement (a later bump or
 * disabling ends the payload, see findPayload).
 */
export const upsertPayload = op(async (h, row: Omit<OidcPayloadRow, 'consumed_at' | 'auth_version'>): Promise<void> => {
  // The provider's writes are batched (group commit): a token exchange makes three, and under load
  // they share transactions instead of each waiting for its own disk flush.
  await h.batch((b) =>
    b.run(
      `INSERT INTO oidc_payload (model, id, payload, grant_id, uid, client_id, account, auth_version, expires_at, consumed_at, user_code)
     VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT auth_version FROM user_account WHERE reference_id = ?), ?, NULL, ?)
     ${UPSERT_CONFLICT}`,
      [row.model, row.id, row.payload, row.grant_id, row.uid, row.client_id, row.account, row.account, row.expires_at, row.user_code],
      UPSERT_MANY,
    ),
  );
});

const UPSERT_CONFLICT = `ON CONFLICT (model, id) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
       client_id = excluded.client_id, account = excluded.account, auth_version = excluded.auth_version, expires_at = excluded.expires_at,
       user_code = excluded.user_code`;

/** The upsert for many rows at once (SQLite's batches): its one parameter, a JSON array of upsertPayload's parameter lists. */
const UPSERT_MANY = `INSERT INTO oidc_payload (model, id, payload, grant_id, uid, client_id, account, auth_version, expires_at, consumed_at, user_code)
     SELECT j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4, j.value ->> 5, j.value ->> 6,
       (SELECT auth_version FROM user_account WHERE reference_id = j.value ->> 7), j.value ->> 8, NULL, j.value ->> 9
     FROM json_each(?) j WHERE true
     ${UPSERT_CONFLICT}`;

/** The condition of findPayload (`p` the payload, `a` its account, LEFT JOINed) and its parameters. */
function livePayload(
  h: Handle,
  model: string,
  column: 'id' | 'uid' | 'user_code',
  value: string,
  expired: boolean,
  a: 'a' | 'pa' = 'a',
): { sql: string; params: unknown[] } {
  return {
    sql: `p.model = ? AND p.${column} = ? AND (? OR p.expires_at IS NULL OR p.expires_at > ?)
       AND (p.account IS NULL OR (${a}.id IS NOT NULL AND ${a}.disabled = ? AND ${a}.auth_version = p.auth_version))`,
    params: [model, value, h.dialect === 'postgres' ? expired : expired ? 1 : 0, h.clock.now(), h.dialect === 'postgres' ? false : 0],
  };
}

/**
 * A live payload: not expired (unless `expired`: the provider tells an expired device code from
 * an unknown one by its own clock), and (when it names an account) of an account that is not
 * disabled and whose auth_version has not moved since it was written.
 */
export const findPayload = op(
  async (h, model: string, where: { id?: string; uid?: string; userCode?: string }, o: { expired?: boolean } = {}): Promise<OidcPayloadRow | undefined> => {
    const [column, value] =
      where.id !== undefined
        ? (['id', where.id] as const)
        : where.uid !== undefined
          ? (['uid', where.uid] as const)
          : (['user_code', where.userCode!] as const);
    if (value.includes('\0')) return undefined; // no id holds one (PostgreSQL's text cannot even bind it)
    const live = livePayload(h, model, column, value, o.expired === true);
    const rows = await h.all(`SELECT p.* FROM oidc_payload p LEFT JOIN user_account a ON a.reference_id = p.account WHERE ${live.sql}`, live.params);
    return rows.length === 0 ? undefined : decodeRow<OidcPayloadRow>('oidc_payload', rows[0]);
  },
);

/** The columns of oidc_payload, for reading a second row beside the first (prefixed). */
const PAYLOAD_COLUMNS = [
  'model',
  'id',
  'payload',
  'grant_id',
  'uid',
  'client_id',
  'account',
  'auth_version',
  'expires_at',
  'consumed_at',
  'user_code',
] as const;

/**
 * A live code or refresh token (as findPayload finds it) and, in the same statement, its grant as
 * findGrantWithFacts finds it (with the account's claims and the client's row), or no grant when
 * that one is not live: a code exchange or refresh reads the one and then asks for the other.
 */
export const findPayloadWithGrant = op(
  async (h, model: string, id: string): Promise<{ payload: OidcPayloadRow; grant: { grant: OidcPayloadRow; facts: AccountFacts } | undefined } | undefined> => {
    if (id.includes('\0')) return undefined; // as findPayload
    const live = livePayload(h, model, 'id', id, false, 'pa');
    const no = h.dialect === 'postgres' ? false : 0;
    const rows = await h.all(
      `SELECT p.*, ${PAYLOAD_COLUMNS.map((c) => `g.${c} AS g_${c}`).join(', ')},
         CASE WHEN g.account IS NULL OR (a.id IS NOT NULL AND a.disabled = ? AND a.auth_version = g.auth_version) THEN 1 ELSE 0 END AS g_live,
         ${FACTS_COLUMNS(h.dialect)}
       FROM oidc_payload p
       LEFT JOIN user_account pa ON pa.reference_id = p.account
       LEFT JOIN oidc_payload g ON g.model = 'Grant' AND g.id = p.grant_id AND (g.expires_at IS NULL OR g.expires_at > ?)
       LEFT JOIN user_account a ON a.reference_id = g.account LEFT JOIN oidc_client c ON c.client_id = g.client_id
       WHERE ${live.sql}`,
      [no, h.clock.now(), ...live.params],
    );
    if (rows.length === 0) return undefined;
    const row = rows[0];
    const own = (prefix: string) => Object.fromEntries(PAYLOAD_COLUMNS.map((c) => [c, row[`${prefix}${c}`]])) as Record<string, unknown>;
    const payload = decodeRow<OidcPayloadRow>('oidc_payload', own(''));
    const grant =
      row.g_id !== null && row.g_id !== undefined && Number(row.g_live) === 1
        ? { grant: decodeRow<OidcPayloadRow>('oidc_payload', own('g_')), facts: factsOf(row) }
        : undefined;
    return { payload, grant };
  },
);

/** The newest live grant of an account to a client (its id), if any. */
export const latestGrant = op(async (h, account: string, clientId: string): Promise<string | undefined> => {
  const rows = await h.all(
    `SELECT p.id FROM oidc_payload p JOIN user_account a ON a.reference_id = p.account
     WHERE p.model = 'Grant' AND p.account = ? AND p.client_id = ? AND (p.expires_at IS NULL OR p.expires_at > ?)
       AND a.disabled = ? AND a.auth_version = p.auth_version
     ORDER BY p.expires_at DESC LIMIT 1`,
    [account, clientId, h.clock.now(), h.dialect === 'postgres' ? false : 0],
  );
  return rows.length === 0 ? undefined : String(rows[0].id);
});

/**
 * Marks a code, refresh token or device code used. One conditional write whose changed rows decide:
 * of the requests presenting the same one at once, on any instance, exactly one gets true. In the
 * group commit with the request's other writes; each its own statement (a batch's count is per
 * caller). A loser that names the grant (`reusedGrant`) ends it in the same transaction as its lost
 * claim, so no crash can keep a grant whose code or token was presented twice.
 */
export const consumePayload = op(async (h, model: string, id: string, reusedGrant?: string): Promise<boolean> =>
  h.batch(async (b) => {
    const decide = async (t: Handle) => {
      const won =
        (
          await t.claim(
            'UPDATE oidc_payload SET consumed_at = ? WHERE model = ? AND id = ? AND consumed_at IS NULL RETURNING model, id',
            [t.clock.now(), model, id],
            CONSUME_MANY,
          )
        ).length === 1;
      if (!won && reusedGrant !== undefined) await t.run(REVOKE_GRANT, [reusedGrant, reusedGrant]);
      return won;
    };
    // A batch is a transaction; a write alone is its own unless it needs a second statement.
    return b.inTransaction || reusedGrant === undefined ? decide(b) : atomically(b, decide);
  }),
);

/**
 * The consumes of a SQLite batch as one statement: each row is changed once however many of the
 * batch's requests present it, and the first of them gets it (sqlite-batch.ts).
 */
const CONSUME_MANY: ClaimMany = {
  sql: `UPDATE oidc_payload SET consumed_at = j.value ->> 0 FROM json_each(?) j
     WHERE oidc_payload.model = j.value ->> 1 AND oidc_payload.id = j.value ->> 2 AND oidc_payload.consumed_at IS NULL
     RETURNING oidc_payload.model AS model, oidc_payload.id AS id`,
  key: (row) => `${String(row.model)}\u0000${String(row.id)}`,
  keyOf: (params) => `${String(params[1])}\u0000${String(params[2])}`,
};

/**
 * Ends a grant whose code or refresh token was used twice (reuse detection): the grant and every
 * token it issued, whichever request holds them. Its sign-in in progress (an Interaction) stays.
 */
export const revokeReusedGrant = op(async (h, grantId: string): Promise<void> => {
  await h.batch((b) => b.run(REVOKE_GRANT, [grantId, grantId]));
});

/** A grant and every token it issued (its sign-in in progress, an Interaction, stays); bound twice: the grant's id. */
const REVOKE_GRANT = `DELETE FROM oidc_payload WHERE (grant_id = ? AND model <> 'Interaction') OR (model = 'Grant' AND id = ?)`;

export const destroyPayload = op(async (h, model: string, id: string): Promise<void> => {
  await h.batch((b) => b.run('DELETE FROM oidc_payload WHERE model = ? AND id = ?', [model, id]));
});

/**
 * Revokes one model's payloads of a grant (the provider asks each token model in turn). Only that
 * model: an Interaction carries its grant's id too, and must survive the revocation of a grant
 * that its own sign-in is replacing.
 */
export const revokeGrant = op(async (h, model: string, grantId: string): Promise<void> => {
  await h.batch((b) => b.run('DELETE FROM oidc_payload WHERE model = ? AND grant_id = ?', [model, grantId]));
});

export const prunePayloads = op(async (h): Promise<void> => {
  await h.k('oidc_payload').where('expires_at', '<', h.clock.now()).del();
});

// A read of every token request: on the read pool (h.all), not the writer's connection.
export const findClient = op(async (h, clientId: string): Promise<OidcClientRow | undefined> => {
  const [row] = await h.all('SELECT * FROM oidc_client WHERE client_id = ?', [clientId]);
  return row ? decodeRow<OidcClientRow>('oidc_client', row) : undefined;
});

export const listClients = op(async (h): Promise<OidcClientRow[]> => {
  const rows = await h.k('oidc_client').orderBy('created_at');
  return rows.map((r: Record<string, unknown>) => decodeRow<OidcClientRow>('oidc_client', r));
});

export const insertClient = op(async (h, row: Omit<OidcClientRow, 'created_at'>): Promise<void> => {
  await h.k('oidc_client').insert({ ...row, created_at: h.clock.now() });
});

export const deleteClient = op(async (h, clientId: string): Promise<boolean> => {
  return (await h.k('oidc_client').where({ client_id: clientId }).del()) > 0;
});

/** A session signed in to a client (kept until the session is pruned): its end is told to the client. */
export const recordSignin = op(async (h, sessionId: string, clientId: string): Promise<void> => {
  await h.k('oidc_signin').insert({ session_id: sessionId, client_id: clientId, created_at: h.clock.now() }).onConflict(['session_id', 'client_id']).ignore();
});

/** The columns of a client that may change (its id and creation time never do). */
const CLIENT_SETTINGS = ['name', 'metadata', 'client_secret', 'first_party', 'allowed_groups', 'two_factor'] as const;
export type ClientSettings = Partial<Pick<OidcClientRow, (typeof CLIENT_SETTINGS)[number]>>;

/** Changes a client's settings (only those columns, whatever else the object holds). */
export const updateClient = op(async (h, clientId: string, changes: ClientSettings): Promise<boolean> => {
  const set = Object.fromEntries(CLIENT_SETTINGS.filter((c) => changes[c] !== undefined).map((c) => [c, changes[c]]));
  if (Object.keys(set).length === 0) return false;
  return (await h.k('oidc_client').where({ client_id: clientId }).update(set)) > 0;
});

export const setClientSecret = op(async (h, clientId: string, secret: string): Promise<boolean> => {
  return (await h.k('oidc_client').where({ client_id: clientId }).update({ client_secret: secret })) > 0;
});

/** The key that signs the provider's cookies: made once (first instance wins), shared by all. */
export const oidcCookieKey = (tx: Tx): Promise<string> => sharedSecret(tx, 'oidc_cookie_key');

/** What an ID token and userinfo say of an account: its fields and its groups' names. */
export interface ClaimsRow {
  email: string;
  email_verified: boolean;
  username: string;
  name: string;
  disabled: boolean;
  groups: string[];
}

/** The managed groups' names of account `a` (its dedicated group left out), as a JSON array. */
function groupNamesSql(dialect: string): string {
  // Managed groups only (dedicated groups are never managed): apps map these names to roles,
  // and a name any account could give its own group would be a role anyone could take.
  // Every group the account is in, directly or through nesting, once each.
  const names = `SELECT g.name FROM usergroup g WHERE g.id IN (${memberGroupsSql('a.id')}) AND ${managedGroupSql('g')}`;
  return dialect === 'postgres'
    ? `(SELECT COALESCE(json_agg(n.name ORDER BY n.name), '[]'::json) FROM (${names}) n)`
    : `(SELECT json_group_array(n.name) FROM (${names} ORDER BY g.name) n)`;
}

/** The columns of an account's claims (a_*) and of a client's row (c_*), for one statement. */
const FACTS_COLUMNS = (dialect: string) =>
  `a.id AS a_id, a.email AS a_email, a.email_verified AS a_email_verified, a.username AS a_username, a.name AS a_name, a.disabled AS a_disabled,
   ${groupNamesSql(dialect)} AS a_group_names,
   c.client_id AS c_client_id, c.name AS c_name, c.metadata AS c_metadata, c.client_secret AS c_client_secret,
   c.first_party AS c_first_party, c.allowed_groups AS c_allowed_groups, c.created_at AS c_created_at, c.two_factor AS c_two_factor`;

/** What a token request needs of the account and the client, read together. */
export interface AccountFacts {
  claims: ClaimsRow | undefined;
  client: OidcClientRow | undefined;
}

function factsOf(row: Record<string, unknown>): AccountFacts {
  const part = (prefix: string) =>
    Object.fromEntries(
      Object.entries(row)
        .filter(([k]) => k.startsWith(prefix))
        .map(([k, v]) => [k.slice(prefix.length), v]),
    );
  const a = part('a_');
  const c = part('c_');
  let claims: ClaimsRow | undefined;
  if (a.id !== null && a.id !== undefined) {
    const { group_names: raw, id: _id, ...account } = a;
    const fields = decodeRow<Omit<ClaimsRow, 'groups'>>('user_account', account);
    claims = { ...fields, groups: (typeof raw === 'string' ? JSON.parse(raw) : raw) as string[] };
  }
  const client = c.client_id === null || c.client_id === undefined ? undefined : decodeRow<OidcClientRow>('oidc_client', c);
  return { claims, client };
}

/**
 * An account's claim fields and the names of its groups (its dedicated group, the first made for
 * it, left out), with a client's row (none when `clientId` is null), in one statement: every code
 * exchange, refresh and userinfo call asks for them. Either may be missing.
 */
export const accountFacts = op(async (h, referenceId: string, clientId: string | null): Promise<AccountFacts> => {
  const [row] = await h.all(
    `SELECT ${FACTS_COLUMNS(h.dialect)} FROM (SELECT 1 AS one) o
     LEFT JOIN user_account a ON a.reference_id = ? LEFT JOIN oidc_client c ON c.client_id = ?`,
    [referenceId, clientId],
  );
  return factsOf(row);
});

/**
 * A live Grant (as findPayload finds it) with its account's claims and its client's row, in one
 * statement: a code exchange or refresh reads the grant and then asks for both.
 */
export const findGrantWithFacts = op(async (h, id: string): Promise<{ grant: OidcPayloadRow; facts: AccountFacts } | undefined> => {
  if (id.includes('\0')) return undefined; // as findPayload
  const live = livePayload(h, 'Grant', 'id', id, false);
  const rows = await h.all(
    `SELECT p.*, ${FACTS_COLUMNS(h.dialect)} FROM oidc_payload p
     LEFT JOIN user_account a ON a.reference_id = p.account LEFT JOIN oidc_client c ON c.client_id = p.client_id
     WHERE ${live.sql}`,
    live.params,
  );
  if (rows.length === 0) return undefined;
  const row = rows[0];
  const payload = Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('a_') && !k.startsWith('c_')));
  return { grant: decodeRow<OidcPayloadRow>('oidc_payload', payload), facts: factsOf(row) };
});
