/**
 * API keys (contract section 16): a credential of the sign-in home for scripts, a named secret
 * (named-credentials.ts: shown once, kept as SHA-256, listed, revoked one by one, audited) that
 * may expire. The owner makes their own on the account page; administrators and the shell any
 * account's. It acts as its account on the HTTP API (access/api-keys.ts checks it), never on the
 * pages, the OIDC endpoints or forward authentication. It ends with revocation, its expiry, the
 * account's auth_version bump (revoke-sessions, a new password) and a disabled account.
 */
import { AppError } from '../errors';
import { apiKeyDigest, newApiKey } from '../auth/api-keys';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { deleteApiKey, insertApiKey, listApiKeys, type ApiKeyRow } from '../store/api-keys';
import { type CredentialKind, credentialOperations, type CredentialOperations } from './named-credentials';
import { afterRecentSignin } from './recent-signin';

/** The longest a key may be made to last (none: until revoked). */
const MAX_EXPIRY_SECONDS = 5 * 366 * 86_400;

export interface ApiKeyView {
  id: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface NewApiKey {
  name: string;
  /** Seconds from now, or null: until revoked. */
  expiresInSeconds: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const apiKeyView = (r: ApiKeyRow): ApiKeyView => ({
  id: r.reference_id,
  name: r.name,
  created_at: new Date(r.created_at).toISOString(),
  expires_at: iso(r.expires_at),
  last_used_at: iso(r.last_used_at),
});

const apiKeys: CredentialKind<ApiKeyRow, ApiKeyView, NewApiKey> = {
  event: 'api_key',
  noun: 'API key',
  check(account, input) {
    const ttl = input.expiresInSeconds;
    if (ttl !== null && (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_EXPIRY_SECONDS)) {
      throw new AppError('invalid_input', 'expires must be between 1 minute and 5 years (or none: until revoked)');
    }
    // Disabling ends every key (its auth_version moves): a key made now would be dead at birth.
    if (account.disabled) throw new AppError('conflict', 'the account is disabled: enable it first');
  },
  async insert(s, account, input) {
    const key = newApiKey();
    const row = await insertApiKey(s.store.root, {
      accountId: account.id,
      name: input.name,
      secretHash: apiKeyDigest(key),
      authVersion: account.auth_version,
      expiresAt: input.expiresInSeconds === null ? null : s.clock.now() + input.expiresInSeconds * 1000,
    });
    return { row, secret: key };
  },
  list: (s, account) => listApiKeys(s.store.root, account.id),
  remove: (s, account, id) => deleteApiKey(s.store.root, account.id, id),
  view: apiKeyView,
};

/** What the front ends call: any account's keys (administrators and the shell, by email) and the caller's own. */
export type ApiKeyOperations = CredentialOperations<ApiKeyView, NewApiKey>;

/** A key is a way in: making one needs a recent sign-in (the shell is not asked; an API key never makes one). */
export const apiKeyOperations = (s: Services, byEmail: (email: string) => Promise<AccountRow>): ApiKeyOperations =>
  afterRecentSignin(s, credentialOperations(s, byEmail, apiKeys));
