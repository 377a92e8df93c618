/**
 * The OpenID Connect sign-ins of sessions that end (oidc_signin), for back-channel logout: which
 * client each ending session signed in to. Read after the write that ends them, in its
 * transaction (so SQLite's write lock is taken first): the sessions are named by what that write
 * did. Who is told, and how, is the accounts' rule (accounts/session-ends.ts).
 */
import { op } from './handle';

/**
 * Which sessions end: one (by id, just ended), every session the account's last auth_version bump
 * just ended, or every open one (before the account is deleted, its sessions with it).
 */
export type Ending = { session: string } | { bumped: true } | { open: true };

/** A sign-in of an ending session: the client, its metadata (the logout URI is there), the account's reference id and the session. */
export interface EndingSignin {
  client_id: string;
  metadata: string;
  sub: string;
  sid: string;
}

export const endingSignins = op(async (h, accountId: number, ending: Ending): Promise<EndingSignin[]> => {
  const live = 's.ended_at IS NULL AND s.expires_at > ?';
  const [which, params] =
    'session' in ending
      ? ['s.id = ?', [ending.session]]
      : 'bumped' in ending
        ? [`s.auth_version = a.auth_version - 1 AND ${live}`, [h.clock.now()]]
        : [`s.auth_version = a.auth_version AND ${live}`, [h.clock.now()]];
  const rows = await h.all(
    `SELECT o.session_id, o.client_id, c.metadata, a.reference_id FROM oidc_signin o
     JOIN session s ON s.id = o.session_id
     JOIN user_account a ON a.id = s.account_id
     JOIN oidc_client c ON c.client_id = o.client_id
     WHERE s.account_id = ? AND ${which}`,
    [accountId, ...params],
  );
  return rows.map((r) => ({ client_id: String(r.client_id), metadata: String(r.metadata), sub: String(r.reference_id), sid: String(r.session_id) }));
});

/** The sign-ins of the account's open sessions to one client (its access revoked from the account's page): the client is told of each. */
export const clientSignins = op(async (h, accountId: number, clientId: string): Promise<EndingSignin[]> => {
  const rows = await h.all(
    `SELECT o.session_id, o.client_id, c.metadata, a.reference_id FROM oidc_signin o
     JOIN session s ON s.id = o.session_id
     JOIN user_account a ON a.id = s.account_id
     JOIN oidc_client c ON c.client_id = o.client_id
     WHERE s.account_id = ? AND o.client_id = ? AND s.ended_at IS NULL AND s.expires_at > ?`,
    [accountId, clientId, h.clock.now()],
  );
  return rows.map((r) => ({ client_id: String(r.client_id), metadata: String(r.metadata), sub: String(r.reference_id), sid: String(r.session_id) }));
});
