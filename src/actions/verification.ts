/** Email verification: request_verification, verify_email, and the mail sent at signup. */
import { AppError } from '../errors';
import { stringField } from '../accounts/validate';
import { updateAccount } from '../store/accounts';
import { voidTokens } from '../store/account-tokens';
import { checkTokenShape, redeemToken } from '../accounts/one-time-tokens';
import { mailVerification } from '../accounts/mailed-links';
import { callerAccount } from '../accounts/acting';
import { ActionDef, said } from './types';

export const requestVerification: ActionDef = {
  onType: 'user_account',
  name: 'request_verification',
  input: {},
  async run(ctx) {
    const account = await callerAccount(ctx);
    if (account.email_verified) return said('your email address is already verified');
    try {
      await mailVerification(ctx.s, account);
    } catch (err) {
      if (err instanceof AppError) throw err;
      ctx.s.logger.error('verification_mail_failed', { account: account.reference_id, error: (err as { code?: string }).code ?? 'error' });
      throw new AppError('unavailable', 'the verification email could not be sent; try again later', { retryAfter: 60 });
    }
    return said('a verification link is on its way');
  },
};

export const verifyEmail: ActionDef = {
  onType: 'user_account',
  name: 'verify_email',
  input: { token: 'required' },
  ignoresToken: true,
  async run({ s, actor, attributes }) {
    const token = stringField(attributes, 'token')!.trim();
    checkTokenShape(token, 'verify_email');
    const account = await redeemToken(s, token, 'verify_email');
    await updateAccount(s.store.root, account.id, { email_verified: true });
    await voidTokens(s.store.root, account.id, 'verify_email');
    await s.audit.record('email_verified', actor, { account: account.reference_id });
    return said('email address verified');
  },
};
