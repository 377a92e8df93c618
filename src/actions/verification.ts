/** Email verification: request_verification, verify_email, and the mail sent at signup. */
import { AppError } from '../errors';
import type { Services } from '../services';
import { stringField } from '../accounts/validate';
import { AccountRow, updateAccount } from '../store/accounts';
import { voidTokens } from '../store/account-tokens';
import { checkTokenShape, mailToken, redeemToken } from './one-time-tokens';
import { mailLink, verificationMessage } from '../mail/messages';
import { callerAccount } from '../accounts/acting';
import { ActionDef, said } from './types';

/** Issues a verification token and mails its link now (its failure is the caller's to answer). */
export async function mailVerification(s: Services, account: AccountRow): Promise<void> {
  return issueAndSend(s, account);
}

async function issueAndSend(s: Services, account: AccountRow): Promise<void> {
  const ttl = s.config.verificationTtlSeconds;
  await mailToken(s, account, 'verify_email', ttl, (token) =>
    verificationMessage(mailLink(s.config, 'verify', token), account.email, account.name, token, ttl),
  );
  s.logger.info('verification_sent', { account: account.reference_id, via: s.mailer.kind });
}

/** After signup or an email change, whose answer must not wait on mail: in the background. */
export function sendVerification(s: Services, account: AccountRow): void {
  s.tasks.run('verification_mail_failed', { account: account.reference_id }, () => issueAndSend(s, account));
}

export const requestVerification: ActionDef = {
  onType: 'user_account',
  name: 'request_verification',
  input: {},
  async run(ctx) {
    const account = await callerAccount(ctx);
    if (account.email_verified) return said('your email address is already verified');
    try {
      await issueAndSend(ctx.s, account);
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
