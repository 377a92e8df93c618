/**
 * The links an account is mailed: confirm the address, lift the sign-in delay. Domain code (sign-in
 * failures, the console's "resend") sends them; the actions that redeem them stay in actions/.
 */
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { mailLink, unlockMessage, verificationMessage } from '../mail/messages';
import { accountTranslator } from '../i18n';
import { mailToken } from './one-time-tokens';

const UNLOCK_TTL_SECONDS = 3600;

/** Mails the unlock link, in the background (the failing signin's answer must not wait or differ). */
export function sendUnlock(s: Services, account: AccountRow): void {
  s.tasks.run('unlock_mail_failed', { account: account.reference_id }, async () => {
    await mailToken(s, account, 'unlock_signin', UNLOCK_TTL_SECONDS, (token) =>
      unlockMessage(mailLink(s.config, 'unlock', token), account.email, account.name, token, UNLOCK_TTL_SECONDS, accountTranslator(s.messages, account)),
    );
    s.logger.info('unlock_sent', { account: account.reference_id, via: s.mailer.kind });
  });
}

/** Issues a verification token and mails its link now (its failure is the caller's to answer). */
export async function mailVerification(s: Services, account: AccountRow): Promise<void> {
  const ttl = s.config.verificationTtl;
  await mailToken(s, account, 'verify_email', ttl, (token) =>
    verificationMessage(mailLink(s.config, 'verify', token), account.email, account.name, token, ttl, accountTranslator(s.messages, account)),
  );
  s.logger.info('verification_sent', { account: account.reference_id, via: s.mailer.kind });
}

/** After signup or an email change, whose answer must not wait on mail: in the background. */
export function sendVerification(s: Services, account: AccountRow): void {
  s.tasks.run('verification_mail_failed', { account: account.reference_id }, () => mailVerification(s, account));
}
