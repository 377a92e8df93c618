/** Email verification: request_verification, verify_email, and the mail sent at signup. */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import { stringField } from '../accounts/validate';
import { updateAccount } from '../store/accounts';
import { voidTokens } from '../store/account-tokens';
import { checkTokenShape, mailToken, redeemToken } from './one-time-tokens';
import type { AccountRow } from '../store/rows';
import { verificationMessage } from '../mail/messages';
import { callerAccount } from './account-helpers';
import { ActionDef, notify } from './types';

async function issueAndSend(deps: Deps, account: AccountRow): Promise<void> {
  const ttl = deps.config.verificationTtlSeconds;
  await mailToken(deps, account, 'verify_email', ttl, (token) => verificationMessage(deps.config.publicUrl, account.email, account.name, token, ttl));
  deps.logger.info('verification_sent', { account: account.reference_id, via: deps.mailer.kind });
}

/** After signup or an email change, whose answer must not wait on mail: in the background. */
export function sendVerification(deps: Deps, account: AccountRow): void {
  deps.tasks.run('verification_mail_failed', { account: account.reference_id }, () => issueAndSend(deps, account));
}

export const requestVerification: ActionDef = {
  onType: 'user_account',
  name: 'request_verification',
  async run(ctx) {
    const account = await callerAccount(ctx);
    if (account.email_verified) return [notify('your email address is already verified')];
    try {
      await issueAndSend(ctx.deps, account);
    } catch (err) {
      if (err instanceof AppError) throw err;
      ctx.deps.logger.error('verification_mail_failed', { account: account.reference_id, error: (err as { code?: string }).code ?? 'error' });
      throw new AppError('unavailable', 'the verification email could not be sent; try again later', { retryAfter: 60 });
    }
    return [notify('a verification link is on its way')];
  },
};

export const verifyEmail: ActionDef = {
  onType: 'user_account',
  name: 'verify_email',
  ignoresToken: true,
  async run({ deps, attributes }) {
    const token = stringField(attributes, 'token')!.trim();
    checkTokenShape(token, 'verify_email');
    const account = await redeemToken(deps, token, 'verify_email');
    await updateAccount(deps.store.knex, account.id, { email_verified: true });
    await voidTokens(deps.store.knex, account.id, 'verify_email');
    await deps.audit.record('email_verified', { account: account.reference_id });
    return [notify('email address verified')];
  },
};
