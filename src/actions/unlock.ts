/**
 * The owner's way past the growing signin delay: when the failures for an account from unfamiliar
 * addresses reach the ceiling, its owner is mailed a one-time link; redeeming it clears the
 * failures and makes the redeeming address familiar (the mailbox proves the owner).
 */
import type { Services } from '../services';
import { stringField } from '../accounts/validate';
import type { AccountRow } from '../store/accounts';
import { voidTokens } from '../store/account-tokens';
import { mailLink, unlockMessage } from '../mail/messages';
import { checkTokenShape, mailToken, redeemToken } from './one-time-tokens';
import { ActionDef, said } from './types';

const UNLOCK_TTL_SECONDS = 3600;

/** Mails the unlock link, in the background (the failing signin's answer must not wait or differ). */
export function sendUnlock(s: Services, account: AccountRow): void {
  s.tasks.run('unlock_mail_failed', { account: account.reference_id }, async () => {
    await mailToken(s, account, 'unlock_signin', UNLOCK_TTL_SECONDS, (token) =>
      unlockMessage(mailLink(s.config, 'unlock', token), account.email, account.name, token, UNLOCK_TTL_SECONDS),
    );
    s.logger.info('unlock_sent', { account: account.reference_id, via: s.mailer.kind });
  });
}

export const unlockSignin: ActionDef = {
  onType: 'user_account',
  name: 'unlock_signin',
  input: { token: 'required' },
  ignoresToken: true,
  async run({ s, actor, attributes }) {
    const token = stringField(attributes, 'token')!.trim();
    checkTokenShape(token, 'unlock_signin');
    const account = await redeemToken(s, token, 'unlock_signin');
    await voidTokens(s.store.root, account.id, 'unlock_signin');
    await s.limiter.passwordReplaced(account.email_key);
    if (actor.client) await s.limiter.rememberAddress(account.email_key, actor.client);
    await s.audit.record('signin_unlocked', actor, { account: account.reference_id });
    return said('signin is unlocked: sign in now');
  },
};
