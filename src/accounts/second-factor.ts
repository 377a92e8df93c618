/**
 * Checking a second factor: a TOTP code (±1 step, each step accepted once, atomically in the
 * store) or a single-use recovery code. At most N failures per account per window, then 429 even
 * for a correct code; each attempt is taken from the limit before its code is checked.
 */
import { AppError } from '../errors';
import { stringField } from './validate';
import { secondFactorFailure } from './failures';
import { hashRecoveryCode, isTotpCode, matchTotp } from '../auth/totp';
import { acceptTotpStep, useRecoveryCode } from '../store/totp';
import type { AccountRow } from '../store/accounts';
import type { Acting } from './acting';

export async function verifySecondFactor(ctx: Acting & { attributes: Record<string, unknown> }, account: AccountRow): Promise<'otp' | 'recovery_code'> {
  const { s, actor, attributes } = ctx;
  const given = stringField(attributes, 'otp', false);
  // One box for both: a value in `otp` that is not a six-digit code is tried as a recovery code
  // (forms need not guess which one a person typed).
  const asRecovery = given !== undefined && !isTotpCode(given) && attributes.recovery_code === undefined;
  const otp = asRecovery ? undefined : given;
  const recovery = asRecovery ? given : stringField(attributes, 'recovery_code', false);
  if (otp === undefined && recovery === undefined) {
    throw new AppError('otp_required', 'this account has a second factor: send otp (or recovery_code) too');
  }
  // The attempt is taken before the code is checked (one conditional write): at most N checked per window, even at once.
  const attempt = await s.limiter.takeTotpAttempt(account.reference_id);
  const db = s.store.root;
  const now = s.clock.now();
  let event: 'totp_failed' | 'totp_replay' | 'recovery_code_failed' = 'totp_failed';
  if (otp !== undefined && account.totp_secret) {
    const step = await matchTotp(account.totp_secret, otp.trim(), account.totp_last_step, now);
    if (step !== null && (await acceptTotpStep(db, account.id, step))) {
      await s.limiter.totpSucceeded(attempt);
      return 'otp';
    }
    // A valid code of an already used step is a replay: log it as such.
    const replay = step !== null || (await matchTotp(account.totp_secret, otp.trim(), null, now)) !== null;
    event = replay ? 'totp_replay' : 'totp_failed';
  } else if (recovery !== undefined) {
    if (await useRecoveryCode(db, account.id, hashRecoveryCode(recovery))) {
      await s.limiter.totpSucceeded(attempt);
      await s.audit.record('recovery_code_used', actor, { account: account.reference_id });
      return 'recovery_code';
    }
    event = 'recovery_code_failed';
  }
  await secondFactorFailure(s, actor, attempt, event);
  throw new AppError('otp_invalid', 'the authenticator code (or recovery code) is wrong, expired or already used');
}
