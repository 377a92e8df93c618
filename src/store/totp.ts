/** Store side of TOTP: the atomic "accept this step once" and recovery codes. */
import type { Db } from './connection';

/**
 * Records `step` as the last accepted one if it is later than the stored one. One UPDATE, so two
 * requests (or two instances) with the same code cannot both succeed.
 */
export async function acceptTotpStep(db: Db, accountId: number, step: number): Promise<boolean> {
  const updated = await db('user_account')
    .where({ id: accountId, totp_enabled: true })
    .andWhere((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
    .update({ totp_last_step: step });
  return updated === 1;
}

/** Turns a pending enrolment on, once, and only for the secret that was shown. Bumps auth_version. */
export async function enableTotp(db: Db, accountId: number, secret: string, step: number): Promise<boolean> {
  const updated = await db('user_account')
    .where({ id: accountId, totp_enabled: false, totp_secret: secret })
    .update({ totp_enabled: true, totp_last_step: step, auth_version: db.raw('auth_version + 1'), updated_at: Date.now() });
  return updated === 1;
}

export async function replaceRecoveryCodes(db: Db, accountId: number, hashes: readonly string[]): Promise<void> {
  await db('recovery_code').where({ account_id: accountId }).del();
  const now = Date.now();
  await db('recovery_code').insert(hashes.map((code_hash) => ({ account_id: accountId, code_hash, created_at: now })));
}

/** Uses a recovery code once (atomically). */
export async function useRecoveryCode(db: Db, accountId: number, hash: string): Promise<boolean> {
  const updated = await db('recovery_code').where({ account_id: accountId, code_hash: hash }).whereNull('used_at').update({ used_at: Date.now() });
  return updated === 1;
}

export async function deleteRecoveryCodes(db: Db, accountId: number): Promise<void> {
  await db('recovery_code').where({ account_id: accountId }).del();
}
