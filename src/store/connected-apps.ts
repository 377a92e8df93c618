/**
 * The apps an account signed in to, as its own page lists them: OpenID Connect clients holding a
 * live grant (with whether a refresh token of it is live), and SAML service providers its open
 * sessions signed in to. And the writes that take one app's access away. Who may, and what else
 * happens (the client's back-channel logout), is the accounts' rule (accounts/connected-apps.ts).
 */
import { op } from './handle';

export interface GrantedClient {
  client_id: string;
  name: string;
  /** The grant's JSON payload (its scopes are in `openid.scope`). */
  payloads: string[];
  /** How many live (unspent, unexpired) refresh tokens its grants hold. */
  refresh_tokens: number;
}

/** The OIDC clients holding a live grant of the account (by its reference id), by name. */
export const grantedClients = op(async (h, account: string): Promise<GrantedClient[]> => {
  const now = h.clock.now();
  const rows = await h.all(
    `SELECT g.client_id, c.name, g.payload,
       (SELECT COUNT(*) FROM oidc_payload r WHERE r.model = 'RefreshToken' AND r.grant_id = g.id AND r.consumed_at IS NULL
          AND (r.expires_at IS NULL OR r.expires_at > ?)) AS refresh_tokens
     FROM oidc_payload g JOIN oidc_client c ON c.client_id = g.client_id JOIN user_account a ON a.reference_id = g.account
     WHERE g.model = 'Grant' AND g.account = ? AND (g.expires_at IS NULL OR g.expires_at > ?) AND a.auth_version = g.auth_version
     ORDER BY c.name, g.client_id`,
    [now, account, now],
  );
  const byClient = new Map<string, GrantedClient>();
  for (const r of rows) {
    const id = String(r.client_id);
    const known = byClient.get(id) ?? { client_id: id, name: String(r.name), payloads: [], refresh_tokens: 0 };
    known.payloads.push(String(r.payload));
    known.refresh_tokens += Number(r.refresh_tokens);
    byClient.set(id, known);
  }
  return [...byClient.values()];
});

/**
 * Ends every grant of the account (by reference id) to the client and every token they issued
 * (codes, access and refresh tokens), in one statement; answers how many rows went.
 */
export const revokeClientGrants = op(async (h, account: string, clientId: string): Promise<number> => {
  const rows = await h.claim(
    `DELETE FROM oidc_payload WHERE (model = 'Grant' AND account = ? AND client_id = ?)
       OR (model <> 'Interaction' AND grant_id IN (SELECT id FROM oidc_payload WHERE model = 'Grant' AND account = ? AND client_id = ?))
     RETURNING model`,
    [account, clientId, account, clientId],
  );
  return rows.length;
});

/** Whether a grant is still stored (a token request checks its grants again after its writes). */
export const grantExists = op(async (h, grantId: string): Promise<boolean> => {
  const rows = await h.all(`SELECT 1 AS one FROM oidc_payload WHERE model = 'Grant' AND id = ?`, [grantId]);
  return rows.length > 0;
});

export interface SamlApp {
  sp_id: string;
  name: string;
  entity_id: string;
  /** When an open session of the account first signed in to it (ms). */
  first_at: number;
  last_at: number;
}

/** The SAML service providers the account's open sessions signed in to. */
export const samlApps = op(async (h, accountId: number): Promise<SamlApp[]> => {
  const rows = await h.all(
    `SELECT p.id AS sp_id, p.name, p.entity_id, MIN(x.created_at) AS first_at, MAX(x.created_at) AS last_at
     FROM saml_signin x JOIN session s ON s.id = x.session_id JOIN saml_sp p ON p.id = x.sp_id
     WHERE s.account_id = ? AND s.ended_at IS NULL AND s.expires_at > ?
     GROUP BY p.id, p.name, p.entity_id ORDER BY p.name, p.id`,
    [accountId, h.clock.now()],
  );
  return rows.map((r) => ({
    sp_id: String(r.sp_id),
    name: String(r.name),
    entity_id: String(r.entity_id),
    first_at: Number(r.first_at),
    last_at: Number(r.last_at),
  }));
});

/** Forgets the account's sessions' sign-ins to a SAML SP (its LogoutRequests are then refused, its sessions no longer named); answers how many. */
export const forgetSamlSignins = op(async (h, accountId: number, spId: string): Promise<number> =>
  h
    .k('saml_signin')
    .where({ sp_id: spId })
    .whereIn('session_id', h.k('session').where({ account_id: accountId }).select('id'))
    .del(),
);

/** Forgets which of the account's sessions signed in to an OIDC client (told of its logout already). */
export const forgetOidcSignins = op(async (h, accountId: number, clientId: string): Promise<number> =>
  h
    .k('oidc_signin')
    .where({ client_id: clientId })
    .whereIn('session_id', h.k('session').where({ account_id: accountId }).select('id'))
    .del(),
);
