/** An account's SSH public keys (contract section 25). */
import { randomUUID } from 'node:crypto';
import { atomically, isUniqueViolation, op } from './handle';
import { decodeRow } from './schema';

export interface SshKeyRow {
  id: number;
  reference_id: string;
  account_id: number;
  key_type: string;
  key_data: string;
  comment: string;
  fingerprint: string;
  created_at: number;
}

export const listSshKeys = op(async (h, accountId: number): Promise<SshKeyRow[]> => {
  const rows = await h.all('SELECT * FROM ssh_key WHERE account_id = ? ORDER BY id', [accountId]);
  return rows.map((r) => decodeRow<SshKeyRow>('ssh_key', r));
});

/**
 * Adds a key unless the account holds `max` already or this one (by fingerprint): the account's
 * row is written first, which holds it (PostgreSQL's row lock, SQLite's one writer) until the
 * transaction ends, so two adds at once count one after the other.
 */
export const insertSshKey = op(
  async (
    h,
    accountId: number,
    key: { type: string; data: string; comment: string; fingerprint: string },
    max: number,
  ): Promise<{ row: SshKeyRow } | { refused: 'full' | 'duplicate' }> =>
    atomically(h, async (t) => {
      await t.run('UPDATE user_account SET updated_at = updated_at WHERE id = ?', [accountId]);
      const [{ n }] = await t.all('SELECT COUNT(*) AS n FROM ssh_key WHERE account_id = ?', [accountId]);
      if (Number(n) >= max) return { refused: 'full' as const };
      const row = {
        reference_id: randomUUID(),
        account_id: accountId,
        key_type: key.type,
        key_data: key.data,
        comment: key.comment,
        fingerprint: key.fingerprint,
        created_at: t.clock.now(),
      };
      const [dup] = await t.all('SELECT id FROM ssh_key WHERE account_id = ? AND fingerprint = ?', [accountId, key.fingerprint]);
      if (dup) return { refused: 'duplicate' as const };
      try {
        const [made] = await t.k('ssh_key').insert(row).returning('id');
        const id = typeof made === 'object' ? Number((made as { id: unknown }).id) : Number(made);
        return { row: { id, ...row } };
      } catch (err) {
        if (isUniqueViolation(err)) return { refused: 'duplicate' as const };
        throw err;
      }
    }),
);

/** Removes one key of the account (by its reference id): the row removed, or undefined. */
export const deleteSshKey = op(async (h, accountId: number, referenceId: string): Promise<SshKeyRow | undefined> => {
  const rows = await h.claim('DELETE FROM ssh_key WHERE account_id = ? AND reference_id = ? RETURNING *', [accountId, referenceId]);
  return rows.length === 0 ? undefined : decodeRow<SshKeyRow>('ssh_key', rows[0]);
});

/** Sets the account's login shell (null: the default); whether it changed. */
export const setLoginShell = op(async (h, accountId: number, shell: string | null): Promise<boolean> => {
  const rows = await h.claim(`UPDATE user_account SET login_shell = ?, updated_at = ? WHERE id = ? AND login_shell IS DISTINCT FROM ? RETURNING id`, [
    shell,
    h.clock.now(),
    accountId,
    shell,
  ]);
  return rows.length > 0;
});
