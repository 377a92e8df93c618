/**
 * Password recovery. The request answers at once and the same way whether or not the email
 * exists: the lookup, the token and the mail happen after the answer, so its timing says nothing.
 */
import { accountTranslator } from '../i18n';
import { newPasswordHash, replacePassword } from '../accounts/replace-password';
import { AppError } from '../errors';
import { emailKeyOrNull, stringField } from '../accounts/validate';
import { findAccountByEmailKey } from '../store/accounts';
import { sourceOfAccount } from '../store/sources';
import { tokenAccountEmailKey, voidTokens } from '../store/account-tokens';
import { checkTokenShape, mailToken, redeemToken } from '../accounts/one-time-tokens';
import { mailLink, resetMessage } from '../mail/messages';
import { ActionDef, said } from './types';

const SAME_ANSWER = 'if an account uses this address, a reset link is on its way';

export const resetPasswordRequest: ActionDef = {
  onType: 'user_account',
  name: 'reset_password_request',
  input: { email: 'required' },
  ignoresToken: true,
  async run({ s, actor, attributes }) {
    const key = emailKeyOrNull(stringField(attributes, 'email')!);
    if (key !== null) {
      s.tasks.run('reset_mail_failed', { account: null }, async () => {
        const account = await findAccountByEmailKey(s.store.root, key);
        if (!account || account.disabled) return;
        // A directory source's person changes the password in the directory: no link that could only be refused.
        if ((await sourceOfAccount(s.store.root, account.id)) !== null) return;
        if (!(await s.limiter.resetRequest(account.reference_id))) {
          await s.audit.record('reset_request_limited', actor, { account: account.reference_id });
          return;
        }
        // A new request voids the older links.
        await voidTokens(s.store.root, account.id, 'reset_password');
        const ttl = s.config.resetTtl;
        await mailToken(s, account, 'reset_password', ttl, (token) =>
          resetMessage(mailLink(s.config, 'reset', token), account.email, account.name, token, ttl, accountTranslator(s.messages, account)),
        );
        await s.audit.record('reset_requested', actor, { account: account.reference_id });
      });
    }
    return said(SAME_ANSWER);
  },
};

export const resetPassword: ActionDef = {
  onType: 'user_account',
  name: 'reset_password',
  input: { token: 'required', password: 'required', passwordConfirm: 'required' },
  ignoresToken: true,
  async run({ s, actor, attributes }) {
    const token = stringField(attributes, 'token')!.trim();
    const password = stringField(attributes, 'password')!;
    const confirm = stringField(attributes, 'passwordConfirm')!;
    if (password !== confirm) throw new AppError('password_mismatch', 'password and passwordConfirm differ');
    checkTokenShape(token, 'reset_password');
    // Validate what can be validated before spending the token, so a weak password can be retried.
    // An unknown token is refused here, before the bcrypt work: guessing costs the server nothing.
    const emailKey = await tokenAccountEmailKey(s.store.root, token, 'reset_password');
    if (emailKey === null) throw new AppError('token_invalid', 'the reset link is not valid or was already used');
    const hash = await newPasswordHash(s, password, confirm, emailKey);
    const account = await redeemToken(s, token, 'reset_password');
    // Sessions issued before the reset end here; TOTP stays as it was.
    await replacePassword(s, actor, account, hash, 'password_reset', (tx) => voidTokens(tx, account.id, 'reset_password'));
    return said('password changed; sign in with the new password');
  },
};
