/** Store side of TOTP: the atomic "accept this step once" and recovery codes. */
import { op } from './handle';

/**
 * Records `step` as the last accepted one if it is later than the stored one. One UPDATE, so two
 * requests (or two instances) with the same code cannot both succeed.
 */
export const acceptTotpStep = op(async (h, accountId: number, step: number): Promise<boolean> => {
  const updated = await h
    .k('user_account')
    .where({ id: accountId, totp_enabled: true })
    .andWhere((q) => q.whereNull('totp_last_step').orWhere('totp_last_step', '<', step))
    .update({ totp_last_step: step });
  return updated === 1;
});

/**
 * Turns a pending enrolment on, once, and only for the secret that was shown. Bumps auth_version.
 * Through accounts/session-ends.ts only, which tells the clients the ended sessions signed in to.
 */
export const enableTotp = op(async (h, accountId: number, secret: string, step: number): Promise<boolean> => {
  const updated = await h
    .k('user_account')
    .where({ id: accountId, totp_enabled: false, totp_secret: secret })
    .update({ totp_enabled: true, totp_last_step: step, auth_version: h.k.raw('auth_version + 1'), updated_at: h.clock.now() });
  return updated === 1;
});

/**
 * Turns TOTP off (if it was on or pending), drops its recovery codes and bumps auth_version.
 * Through accounts/session-ends.ts only (in its transaction, so both writes commit together).
 */
export const disableTotp = op(async (h, accountId: number): Promise<void> => {
  await h
    .k('user_account')
    .where({ id: accountId })
    .update({ totp_enabled: false, totp_secret: null, totp_last_step: null, auth_version: h.k.raw('auth_version + 1'), updated_at: h.clock.now() });
  await h.k('recovery_code').where({ account_id: accountId }).del();
});

export const replaceRecoveryCodes = op(async (h, accountId: number, hashes: readonly string[]): Promise<void> => {
  await h.k('recovery_code').where({ account_id: accountId }).del();
  const now = h.clock.now();
  await h.k('recovery_code').insert(hashes.map((code_hash) => ({ account_id: accountId, code_hash, created_at: now })));
});

/** Uses a recovery code once (atomically). */
export const useRecoveryCode = op(async (h, accountId: number, hash: string): Promise<boolean> => {
  const updated = await h.k('recovery_code').where({ account_id: accountId, code_hash: hash }).whereNull('used_at').update({ used_at: h.clock.now() });
  return updated === 1;
});
