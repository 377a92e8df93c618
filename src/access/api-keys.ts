/**
 * Checking a presented API key (contract section 16): a hash and one indexed read, no bcrypt,
 * and no write but "last used", at most once a minute. A key stands for its account as a
 * session-less access token would: authenticate() then holds it to the same checks (the account
 * enabled, its auth_version the one the key was made under).
 */
import type { Clock } from '../clock';
import type { Tx } from '../store/handle';
import { findApiKey, touchApiKey } from '../store/api-keys';
import { API_KEY_SHAPE, apiKeyDigest } from '../auth/api-keys';
import { invalidToken } from '../auth/tokens';
import type { Presented } from './presented';

const TOUCH_EVERY_MS = 60_000;

/** The key's account and the auth_version it was made under (no session, no signing key), or invalid_token. */
export async function verifyApiKey(db: Tx, clock: Clock, key: string): Promise<Presented> {
  if (!API_KEY_SHAPE.test(key)) throw invalidToken('api_key');
  const row = await findApiKey(db, apiKeyDigest(key));
  const now = clock.now();
  if (!row || (row.expires_at !== null && row.expires_at <= now)) throw invalidToken('api_key');
  if (row.last_used_at === null || now - row.last_used_at >= TOUCH_EVERY_MS) await touchApiKey(db, row.id);
  return { referenceId: row.account_reference_id, authVersion: row.auth_version, sid: null, kid: null, apiKey: true };
}
