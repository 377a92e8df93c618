/**
 * The TOTP second factor: enrol (password) → confirm with a current code (only then does it
 * apply; answers 10 recovery codes once) → disable (password and a code). Enabling and disabling
 * bump auth_version, so earlier sessions end. TOTP strengthens signin only: permissions still
 * decide what the account may do.
 */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { hashRecoveryCode, matchTotp, newRecoveryCodes, newTotpSecret, totpUri } from '../auth/totp';
import { bumpAuthVersion, updateAccount } from '../store/accounts';
import { deleteRecoveryCodes, enableTotp, replaceRecoveryCodes } from '../store/totp';
import { callerAccount, confirmPassword, reload, tokenItem } from './account-helpers';
import { verifySecondFactor } from './second-factor';
import { ActionDef, notify } from './types';

export const totpEnroll: ActionDef = {
  onType: 'user_account',
  name: 'totp_enroll',
  async run(ctx) {
    const password = stringField(ctx.attributes, 'password')!;
    const account = await callerAccount(ctx);
    await confirmPassword(ctx, account, password);
    if (account.totp_enabled) throw new AppError('forbidden', 'TOTP is already on; turn it off first to enrol a new device');
    const secret = newTotpSecret();
    // Pending until totp_confirm: signin does not ask for a code yet.
    await updateAccount(ctx.deps.store.knex, account.id, { totp_secret: secret, totp_last_step: null });
    ctx.deps.logger.info('totp_enroll_started', { account: account.reference_id });
    return [
      { ResponseType: 'totp.secret', Attributes: { secret, uri: totpUri(secret, account.email) } },
      notify('scan the code in your authenticator app, then confirm with a current code'),
    ];
  },
};

export const totpConfirm: ActionDef = {
  onType: 'user_account',
  name: 'totp_confirm',
  async run(ctx) {
    const { deps } = ctx;
    const otp = stringField(ctx.attributes, 'otp')!.trim();
    const account = await callerAccount(ctx);
    if (account.totp_enabled) throw new AppError('forbidden', 'TOTP is already on');
    if (!account.totp_secret) throw new AppError('invalid_input', 'start with totp_enroll');
    await deps.limiter.assertTotpAllowed(account.reference_id);
    const step = await matchTotp(account.totp_secret, otp, null);
    if (step === null) {
      const locked = await deps.limiter.totpFailed(account.reference_id);
      await deps.audit.record('totp_failed', { account: account.reference_id, client: ctx.clientAddress });
      if (locked) await deps.audit.record('lockout', { account: account.reference_id, kind: 'totp' }, 'warn');
      throw new AppError('otp_invalid', 'the code is wrong or expired');
    }
    const codes = newRecoveryCodes();
    const applied = await deps.store.transaction(async (trx) => {
      // Only the secret that was shown, only once: a concurrent confirm or re-enrol loses.
      if (!(await enableTotp(trx, account.id, account.totp_secret!, step))) return false;
      await replaceRecoveryCodes(trx, account.id, codes.map(hashRecoveryCode));
      return true;
    });
    if (!applied) throw new AppError('otp_invalid', 'the enrolment changed meanwhile; start again with totp_enroll');
    await deps.audit.record('totp_enabled', { account: account.reference_id });
    return [
      tokenItem(deps, await reload(deps, account.id)),
      { ResponseType: 'totp.recovery_codes', Attributes: { codes } },
      notify('TOTP is on; keep the recovery codes somewhere safe: they are shown only once'),
    ];
  },
};

export const totpDisable: ActionDef = {
  onType: 'user_account',
  name: 'totp_disable',
  async run(ctx) {
    const { deps } = ctx;
    const password = stringField(ctx.attributes, 'password')!;
    const account = await callerAccount(ctx);
    if (!account.totp_enabled) throw new AppError('invalid_input', 'TOTP is not on');
    await confirmPassword(ctx, account, password);
    await verifySecondFactor(ctx, account);
    await deps.store.transaction(async (trx) => {
      await bumpAuthVersion(trx, account.id, { totp_enabled: false, totp_secret: null, totp_last_step: null });
      await deleteRecoveryCodes(trx, account.id);
    });
    await deps.audit.record('totp_disabled', { account: account.reference_id });
    return [tokenItem(deps, await reload(deps, account.id)), notify('TOTP is off')];
  },
};
