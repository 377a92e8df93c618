/**
 * Back-channel logout (OpenID Connect Back-Channel Logout 1.0): when a session ends, however it
 * ends, a message per client it signed in to is queued in the same transaction
 * (accounts/session-ends.ts); the sender turns each into a logout token here, when it is sent, and POSTs it.
 */
import type { Store } from '../store/connection';
import type { TokenService } from '../auth/tokens';
import type { LogoutMessage } from '../deliveries/queue';
import { findClient } from '../store/oidc';

/** The sender's LogoutSigner: the client's logout URI and a token for it, or null when the client is gone or stopped asking. */
export function logoutSigner(store: Store, tokens: TokenService) {
  return async (message: unknown, messageId: string): Promise<{ url: string; token: string } | null> => {
    const m = message as Partial<LogoutMessage>;
    if (typeof m.client_id !== 'string' || typeof m.sub !== 'string' || typeof m.sid !== 'string') throw new Error('not a logout message');
    const client = await findClient(store.root, m.client_id);
    const url = client ? (JSON.parse(client.metadata) as { backchannel_logout_uri?: string }).backchannel_logout_uri : undefined;
    if (!url) return null;
    return { url, token: await tokens.signLogout({ clientId: m.client_id, sub: m.sub, sid: m.sid, jti: messageId }) };
  };
}
