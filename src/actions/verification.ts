/** Email verification: request_verification, verify_email, and the mail sent at signup. */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import { stringField } from '../accounts/validate';
import { findAccountById, updateAccount } from '../store/accounts';
import { consumeToken, issueToken, voidTokens } from '../store/account-tokens';
import type { AccountRow } from '../store/rows';
import { verificationMessage } from '../mail/messages';
import { callerAccount } from './account-helpers';
import { ActionDef, notify } from './types';

async function issueAndSend(deps: Deps, account: AccountRow): Promise<void> {
  const token = await issueToken(deps.store.knex, account.id, 'verify_email', account.email_key, deps.config.verificationTtlSeconds);
  try {
    await deps.mailer.send(verificationMessage(deps.config.publicUrl, account.email, account.name, token, deps.config.verificationTtlSeconds));
  } catch (err) {
    // The mail did not go out: the token must not linger half-delivered.
    await voidTokens(deps.store.knex, account.id, 'verify_email');
    throw err;
  }
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
    if (token.length < 20 || token.length > 200) throw new AppError('token_invalid', 'the verification link is not valid');
    const result = await consumeToken(deps.store.knex, token, 'verify_email');
    if (!result.ok) {
      if (result.reason === 'expired') throw new AppError('token_expired', 'the verification link has expired; request a new one');
      throw new AppError('token_invalid', 'the verification link is not valid or was already used');
    }
    const account = await findAccountById(deps.store.knex, result.accountId);
    // Bound to the address it was sent to: after an email change, old links prove nothing.
    if (!account || account.email_key !== result.emailKey) throw new AppError('token_invalid', 'the verification link is not valid or was already used');
    await updateAccount(deps.store.knex, account.id, { email_verified: true });
    await voidTokens(deps.store.knex, account.id, 'verify_email');
    await deps.audit.record('email_verified', { account: account.reference_id });
    return [notify('email address verified')];
  },
};
