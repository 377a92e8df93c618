/**
 * The owner's way past the growing signin delay: when the failures for an account from unfamiliar
 * addresses reach the ceiling, its owner is mailed a one-time link; redeeming it clears the
 * failures and makes the redeeming address familiar (the mailbox proves the owner).
 */
import { stringField } from '../accounts/validate';
import { voidTokens } from '../store/account-tokens';
import { checkTokenShape, redeemToken } from '../accounts/one-time-tokens';
import { ActionDef, said } from './types';

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
