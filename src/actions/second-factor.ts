/**
 * Checking a second factor: a TOTP code (±1 step, each step accepted once, atomically in the
 * store) or a single-use recovery code. At most N failures per account per window, then 429 even
 * for a correct code.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { hashRecoveryCode, matchTotp } from '../auth/totp';
import { acceptTotpStep, useRecoveryCode } from '../store/totp';
import type { AccountRow } from '../store/rows';
import type { ActionContext } from './types';

export async function verifySecondFactor(ctx: ActionContext, account: AccountRow): Promise<'otp' | 'recovery_code'> {
  const { deps, attributes } = ctx;
  const otp = stringField(attributes, 'otp', false);
  const recovery = stringField(attributes, 'recovery_code', false);
  if (otp === undefined && recovery === undefined) {
    throw new AppError('otp_required', 'this account has a second factor: send otp (or recovery_code) with the password');
  }
  await deps.limiter.assertTotpAllowed(account.reference_id);
  const db = deps.store.knex;

  if (otp !== undefined && account.totp_secret) {
    const step = await matchTotp(account.totp_secret, otp.trim(), account.totp_last_step);
    if (step !== null && (await acceptTotpStep(db, account.id, step))) return 'otp';
    // A valid code of an already used step is a replay: log it as such.
    const replay = step !== null || (await matchTotp(account.totp_secret, otp.trim(), null)) !== null;
    await totpFailure(ctx, account, replay ? 'totp_replay' : 'totp_failed');
  } else if (recovery !== undefined) {
    if (await useRecoveryCode(db, account.id, hashRecoveryCode(recovery))) {
      await deps.audit.record('recovery_code_used', { account: account.reference_id });
      return 'recovery_code';
    }
    await totpFailure(ctx, account, 'recovery_code_failed');
  } else {
    await totpFailure(ctx, account, 'totp_failed');
  }
  throw new AppError('otp_invalid', 'the code is wrong, expired or already used');
}

async function totpFailure(ctx: ActionContext, account: AccountRow, event: string): Promise<void> {
  const locked = await ctx.deps.limiter.totpFailed(account.reference_id);
  await ctx.deps.audit.record(event, { account: account.reference_id, client: ctx.clientAddress });
  if (locked) await ctx.deps.audit.record('lockout', { account: account.reference_id, kind: 'totp' }, 'warn');
}
