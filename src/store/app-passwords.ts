/** App passwords: an account's passwords for one app each, kept as SHA-256 (store side). */
import { randomUUID } from 'node:crypto';
import { op } from './handle';
import { decodeRow } from './schema';
import type { AccountRow } from './accounts';

export interface AppPasswordRow {
  id: number;
  reference_id: string;
  account_id: number;
  name: string;
  secret_hash: string;
  created_at: number;
  last_used_at: number | null;
}

const decode = (r: Record<string, unknown>) => decodeRow<AppPasswordRow>('app_password', r);

export const insertAppPassword = op(async (h, accountId: number, name: string, secretHash: string): Promise<AppPasswordRow> => {
  const row = { reference_id: randomUUID(), account_id: accountId, name, secret_hash: secretHash, created_at: h.clock.now(), last_used_at: null };
  await h.k('app_password').insert(row);
  return decode((await h.k('app_password').where({ reference_id: row.reference_id }).first()) as Record<string, unknown>);
});

export const listAppPasswords = op(async (h, accountId: number): Promise<AppPasswordRow[]> =>
  (await h.k('app_password').where({ account_id: accountId }).orderBy('id')).map(decode),
);

export const countAppPasswords = op(async (h, accountId: number): Promise<number> => {
  const [row] = await h.k('app_password').where({ account_id: accountId }).count({ n: '*' });
  return Number(row?.n ?? 0);
});

/** Revokes one of the account's app passwords: false when it has none by that id. */
export const deleteAppPassword = op(
  async (h, accountId: number, referenceId: string): Promise<boolean> =>
    (await h.k('app_password').where({ account_id: accountId, reference_id: referenceId }).del()) > 0,
);

/** Records a use, at most once a minute (a bind storm writes nothing more). */
export const touchAppPassword = op(async (h, id: number, withinMs: number): Promise<void> => {
  const now = h.clock.now();
  await h
    .k('app_password')
    .where({ id })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', now - withinMs))
    .update({ last_used_at: now });
});

/**
 * A bind's one read: the account with this username and, when the secret is one of its app
 * passwords, that app password (its id and last use). One statement instead of two round trips.
 */
export const findAccountForBind = op(
  async (
    h,
    username: string,
    secretHash: string,
  ): Promise<{ account: AccountRow; appPassword: Pick<AppPasswordRow, 'id' | 'last_used_at'> | null } | undefined> => {
    const [raw] = await h.all(
      `SELECT a.*, p.id AS app_password_id, p.last_used_at AS app_password_last_used_at
       FROM user_account a LEFT JOIN app_password p ON p.account_id = a.id AND p.secret_hash = ?
       WHERE a.username = ?`,
      [secretHash, username],
    );
    if (!raw) return undefined;
    const { app_password_id: id, app_password_last_used_at: lastUsed, ...account } = raw;
    return {
      account: decodeRow<AccountRow>('user_account', account),
      appPassword:
        id === null || id === undefined ? null : { id: Number(id), last_used_at: lastUsed === null || lastUsed === undefined ? null : Number(lastUsed) },
    };
  },
);
