/**
 * Back-channel logout messages: when sessions end, each OpenID Connect client they signed in to
 * (oidc_signin) that has a back-channel logout URI gets a message in the delivery queue, written
 * in the transaction that ends them. Called after the write that ends them (so SQLite's write lock
 * is taken first): the sessions are named by what that write did.
 */
import { enqueue, type NewDelivery } from './deliveries';
import { op, seal } from './handle';

export const LOGOUT_TOPIC = 'backchannel_logout';

/** What a logout message carries; the token is signed when it is sent. */
export interface LogoutMessage {
  client_id: string;
  /** The account's reference id (the ID tokens' sub). */
  sub: string;
  /** The Gatehouse session (the ID tokens' sid). */
  sid: string;
}

/**
 * Which sessions end: one (by id, just ended), every session the account's last auth_version bump
 * just ended, or every open one (before the account is deleted, its sessions with it).
 */
export type Ending = { session: string } | { bumped: true } | { open: true };

/** Queues a logout message per client the ending sessions signed in to; answers how many. */
export const queueLogouts = op(async (h, accountId: number, ending: Ending): Promise<number> => {
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
  const messages: NewDelivery[] = rows
    .filter((r) => typeof (JSON.parse(String(r.metadata)) as { backchannel_logout_uri?: unknown }).backchannel_logout_uri === 'string')
    .map((r) => ({
      kind: 'logout',
      topic: LOGOUT_TOPIC,
      payload: JSON.stringify({ client_id: String(r.client_id), sub: String(r.reference_id), sid: String(r.session_id) } satisfies LogoutMessage),
    }));
  await enqueue(seal(h), messages);
  return messages.length;
});
