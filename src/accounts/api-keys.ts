/**
 * API keys (contract section 16): a credential of the sign-in home for scripts. An administrator
 * (or the shell) makes one for an account; it is shown once, kept as SHA-256, listed with its
 * name, creation, last use and expiry, and revoked one by one. It acts as its account on the HTTP
 * API (auth/api-keys.ts checks it), never on the pages, the OIDC endpoints or forward
 * authentication. It ends with revocation, its expiry, the account's auth_version bump
 * (revoke-sessions, a new password) and a disabled account. Audited.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import { requireAdministrator } from '../access/caller';
import { apiKeyDigest, newApiKey } from '../auth/api-keys';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { deleteApiKey, insertApiKey, listApiKeys, type ApiKeyRow } from '../store/api-keys';
import { validateName } from './validate';

/** At most this many per account: one per script, not one per run. */
const MAX_PER_ACCOUNT = 50;
/** The longest a key may be made to last (none: until revoked). */
const MAX_EXPIRY_SECONDS = 5 * 366 * 86_400;

export interface ApiKeyView {
  id: string;
  name: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const apiKeyView = (r: ApiKeyRow): ApiKeyView => ({
  id: r.reference_id,
  name: r.name,
  created_at: new Date(r.created_at).toISOString(),
  expires_at: iso(r.expires_at),
  last_used_at: iso(r.last_used_at),
});

export async function addApiKey(
  s: Services,
  actor: Actor,
  account: AccountRow,
  input: { name: string; expiresInSeconds: number | null },
): Promise<{ apiKey: ApiKeyView; key: string }> {
  const name = validateName(input.name);
  const ttl = input.expiresInSeconds;
  if (ttl !== null && (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_EXPIRY_SECONDS)) {
    throw new AppError('invalid_input', 'expires must be between 1 minute and 5 years (or none: until revoked)');
  }
  if (account.disabled) throw new AppError('conflict', 'the account is disabled: enable it first');
  if ((await listApiKeys(s.store.root, account.id)).length >= MAX_PER_ACCOUNT) {
    throw new AppError('conflict', `an account has at most ${MAX_PER_ACCOUNT} API keys; revoke one first`);
  }
  const key = newApiKey();
  const row = await insertApiKey(s.store.root, {
    accountId: account.id,
    name,
    secretHash: apiKeyDigest(key),
    authVersion: account.auth_version,
    expiresAt: ttl === null ? null : s.clock.now() + ttl * 1000,
  });
  await s.audit.record('api_key_added', actor, { account: account.reference_id, api_key: row.reference_id });
  return { apiKey: apiKeyView(row), key };
}

/** What the front ends call: any account's keys, by email (administrators and the shell). */
export interface ApiKeyOperations {
  add(actor: Actor, email: string, input: { name: string; expiresInSeconds: number | null }): Promise<{ apiKey: ApiKeyView; key: string }>;
  list(actor: Actor, email: string): Promise<ApiKeyView[]>;
  revoke(actor: Actor, email: string, id: string): Promise<void>;
}

export function apiKeyOperations(s: Services, byEmail: (email: string) => Promise<AccountRow>): ApiKeyOperations {
  const other = async (actor: Actor, email: string) => {
    requireAdministrator(actor, 'manage API keys');
    return byEmail(email);
  };
  return {
    add: async (actor, email, input) => addApiKey(s, actor, await other(actor, email), input),
    list: async (actor, email) => (await listApiKeys(s.store.root, (await other(actor, email)).id)).map(apiKeyView),
    async revoke(actor, email, id) {
      const account = await other(actor, email);
      if (!(await deleteApiKey(s.store.root, account.id, id))) throw new AppError('not_found', `no API key ${id.slice(0, 60)} for this account`);
      await s.audit.record('api_key_revoked', actor, { account: account.reference_id, api_key: id });
    },
  };
}
