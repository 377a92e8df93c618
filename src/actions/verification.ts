/** Email verification: request_verification, verify_email, and the mail sent at signup. */
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
    // Queued with its token; the running server sends it, retrying while the mail server is down.
    await mailVerification(ctx.s, account);
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
