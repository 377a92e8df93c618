/**
 * Verification and reset tokens: mailing one (the token and its queued mail in one write) and
 * spending one (once, unexpired, for the address it was sent to).
 */
import { AppError } from '../errors';
import type { Services } from '../services';
import { AccountRow, findAccountById } from '../store/accounts';
import { consumeToken, issueToken, TokenPurpose } from '../store/account-tokens';
import { queueMail, type MailTopic } from '../deliveries/queue';
import type { MailMessage } from '../mail/mailer';

const LABEL: Record<TokenPurpose, string> = {
  verify_email: 'verification',
  reset_password: 'reset',
  unlock_signin: 'unlock',
  recovery: 'recovery',
  end_session: 'sign-out',
};

/** Cheap shape check, before any store work. */
export function checkTokenShape(token: string, purpose: TokenPurpose): void {
  if (token.length < 20 || token.length > 200) throw new AppError('token_invalid', `the ${LABEL[purpose]} link is not valid`);
}

export async function redeemToken(s: Services, token: string, purpose: TokenPurpose): Promise<AccountRow> {
  const result = await consumeToken(s.store.root, token, purpose);
  const invalid = () => new AppError('token_invalid', `the ${LABEL[purpose]} link is not valid or was already used`);
  if (!result.ok) {
    if (result.reason === 'expired') throw new AppError('token_expired', `the ${LABEL[purpose]} link has expired; request a new one`);
    throw invalid();
  }
  const account = await findAccountById(s.store.root, result.accountId);
  // Bound to the address it was sent to: after an email change, old links prove nothing.
  if (!account || account.email_key !== result.emailKey) throw invalid();
  return account;
}

const TOPIC: Record<TokenPurpose, MailTopic> = {
  verify_email: 'verification',
  reset_password: 'reset',
  unlock_signin: 'unlock',
  recovery: 'recovery',
  end_session: 'new_signin',
};

/**
 * Issues a token and queues its mail in one write: both or neither. A running server sends it,
 * retrying while the mail server is down (runtime/sender.ts).
 */
export async function mailToken(
  s: Services,
  account: AccountRow,
  purpose: TokenPurpose,
  ttlSeconds: number,
  message: (token: string) => MailMessage,
): Promise<void> {
  await s.store.transaction(async (tx) => {
    const token = await issueToken(tx, account.id, purpose, account.email_key, ttlSeconds);
    await queueMail(tx, message(token), TOPIC[purpose]);
  });
  s.sender.nudge();
}
