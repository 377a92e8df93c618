/**
 * The TOTP second factor: enrol (password) → confirm with a current code (only then does it
 * apply; answers 10 recovery codes once) → disable (password and a code). Enabling and disabling
 * bump auth_version, so earlier sessions end. TOTP strengthens signin only: permissions still
 * decide what the account may do.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { secondFactorFailure } from '../accounts/failures';
import { reloadAccount, turnOffTotp } from '../accounts/lifecycle';
import { hashRecoveryCode, matchTotp, newRecoveryCodes, newTotpSecret, totpUri } from '../auth/totp';
import { updateAccount } from '../store/accounts';
import { replaceRecoveryCodes } from '../store/totp';
import { enableTotp } from '../accounts/session-ends';
import { newSession } from './account-helpers';
import { callerAccount, confirmPassword } from '../accounts/acting';
import { verifySecondFactor } from '../accounts/second-factor';
import { assertRecentSignin, confirmPasswordAgain } from '../accounts/recent-signin';
import type { ActionDef } from './types';

export const totpEnroll: ActionDef = {
  onType: 'user_account',
  name: 'totp_enroll',
  input: { password: 'required' },
  async run(ctx) {
    const password = stringField(ctx.attributes, 'password')!;
    const account = await callerAccount(ctx);
    // A new second factor is a way in: the password given here is the proof (never an API key's),
    // and it counts as entered again in this session: totp_confirm, which turns TOTP on, checks
    // the rule again, within the window of this password.
    await assertRecentSignin(ctx.s, ctx.actor, { proving: true });
    await confirmPasswordAgain(ctx, account, password);
    if (account.totp_enabled) throw new AppError('forbidden', 'TOTP is already on; turn it off first to enrol a new device', { reason: 'totp_already_on' });
    const secret = newTotpSecret();
    // Pending until totp_confirm: signin does not ask for a code yet.
    await updateAccount(ctx.s.store.root, account.id, { totp_secret: secret, totp_last_step: null });
    ctx.s.logger.info('totp_enroll_started', { account: account.reference_id });
    return {
      totpSecret: { secret, uri: totpUri(secret, account.email) },
      message: 'scan the code in your authenticator app, then confirm with a current code',
    };
  },
};

export const totpConfirm: ActionDef = {
  onType: 'user_account',
  name: 'totp_confirm',
  input: { otp: 'required' },
  async run(ctx) {
    const { s } = ctx;
    const otp = stringField(ctx.attributes, 'otp')!.trim();
    const account = await callerAccount(ctx);
    // Turning TOTP on is the write the rule guards: refused early here (an API key confirms none;
    // a session past the window, its enrolment's password included, is asked to confirm it is
    // them), and checked again in the transaction that turns it on.
    await assertRecentSignin(s, ctx.actor);
    if (account.totp_enabled) throw new AppError('forbidden', 'TOTP is already on', { reason: 'totp_already_on' });
    if (!account.totp_secret) throw new AppError('invalid_input', 'start with totp_enroll');
    const attempt = await s.limiter.takeTotpAttempt(account.reference_id);
    const step = await matchTotp(account.totp_secret, otp, null, s.clock.now());
    if (step === null) {
      await secondFactorFailure(s, ctx.actor, attempt, 'totp_failed');
      throw new AppError('otp_invalid', 'the code is wrong or expired');
    }
    await s.limiter.totpSucceeded(attempt);
    const codes = newRecoveryCodes();
    const applied = await s.store.transaction(async (tx) => {
      await assertRecentSignin(s, ctx.actor, { tx });
      // Only the secret that was shown, only once: a concurrent confirm or re-enrol loses.
      if (!(await enableTotp(tx, account.id, account.totp_secret!, step))) return false;
      await replaceRecoveryCodes(tx, account.id, codes.map(hashRecoveryCode));
      return true;
    });
    if (!applied) throw new AppError('otp_invalid', 'the enrolment changed meanwhile; start again with totp_enroll');
    await s.audit.record('totp_enabled', ctx.actor, { account: account.reference_id });
    return {
      session: await newSession(ctx, await reloadAccount(s, account.id), true),
      recoveryCodes: codes,
      message: 'TOTP is on; keep the recovery codes somewhere safe: they are shown only once',
    };
  },
};

export const totpDisable: ActionDef = {
  onType: 'user_account',
  name: 'totp_disable',
  input: { password: 'required', otp: 'optional', recovery_code: 'optional' },
  async run(ctx) {
    const { s } = ctx;
    const password = stringField(ctx.attributes, 'password')!;
    const account = await callerAccount(ctx);
    if (!account.totp_enabled) throw new AppError('invalid_input', 'TOTP is not on');
    await confirmPassword(ctx, account, password);
    await verifySecondFactor(ctx, account);
    await turnOffTotp(s, ctx.actor, account, 'totp_disabled');
    return { session: await newSession(ctx, await reloadAccount(s, account.id), false), message: 'TOTP is off' };
  },
};
