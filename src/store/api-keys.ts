/** API keys: keys a script acts as one account with on the HTTP API, kept as SHA-256 (store side). */
import { randomUUID } from 'node:crypto';
import { op } from './handle';
import { decodeRow } from './schema';

export interface ApiKeyRow {
  id: number;
  reference_id: string;
  account_id: number;
  name: string;
  secret_hash: string;
  /** The account's auth_version when the key was made: a bump ends the key. */
  auth_version: number;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

const decode = (r: Record<string, unknown>) => decodeRow<ApiKeyRow>('api_key', r);

export const insertApiKey = op(
  async (h, key: { accountId: number; name: string; secretHash: string; authVersion: number; expiresAt: number | null }): Promise<ApiKeyRow> => {
    const row = {
      reference_id: randomUUID(),
      account_id: key.accountId,
      name: key.name,
      secret_hash: key.secretHash,
      auth_version: key.authVersion,
      created_at: h.clock.now(),
      expires_at: key.expiresAt,
      last_used_at: null,
    };
    await h.k('api_key').insert(row);
    return decode((await h.k('api_key').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
  },
);

export const listApiKeys = op(async (h, accountId: number): Promise<ApiKeyRow[]> =>
  (await h.k('api_key').where({ account_id: accountId }).orderBy('id')).map(decode),
);

/** Revokes one of the account's keys: false when it has none by that id. */
export const deleteApiKey = op(
  async (h, accountId: number, referenceId: string): Promise<boolean> =>
    (await h.k('api_key').where({ account_id: accountId, reference_id: referenceId }).del()) > 0,
);

/** The key with this hash and its account's reference id and current auth_version (one indexed read), or undefined. */
export const findApiKey = op(
  async (h, secretHash: string): Promise<(ApiKeyRow & { account_reference_id: string; account_auth_version: number }) | undefined> => {
    const [row] = await h.all(
      `SELECT k.*, a.reference_id AS account_reference_id, a.auth_version AS account_auth_version
       FROM api_key k JOIN user_account a ON a.id = k.account_id WHERE k.secret_hash = ?`,
      [secretHash],
    );
    if (!row) return undefined;
    const { account_reference_id, account_auth_version, ...key } = row;
    return { ...decode(key), account_reference_id: String(account_reference_id), account_auth_version: Number(account_auth_version) };
  },
);

/** Records a use (the caller asks at most once a minute per key). */
export const touchApiKey = op(async (h, id: number): Promise<void> => {
  await h.k('api_key').where({ id }).update({ last_used_at: h.clock.now() });
});
