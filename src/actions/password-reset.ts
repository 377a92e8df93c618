/**
 * Password recovery. The request answers at once and the same way whether or not the email
 * exists: the lookup, the token and the mail happen after the answer, so its timing says nothing.
 */
import { AppError } from '../errors';
import { emailKeyOrNull, stringField, validatePassword } from '../accounts/validate';
import { bumpAuthVersion, findAccountByEmailKey } from '../store/accounts';
import { tokenAccountEmailKey, voidTokens } from '../store/account-tokens';
import { checkTokenShape, mailToken, redeemToken } from './one-time-tokens';
import { resetMessage } from '../mail/messages';
import { ActionDef, notify } from './types';

const SAME_ANSWER = 'if an account uses this address, a reset link is on its way';

export const resetPasswordRequest: ActionDef = {
  onType: 'user_account',
  name: 'reset_password_request',
  ignoresToken: true,
  async run({ deps, attributes, clientAddress }) {
    const key = emailKeyOrNull(stringField(attributes, 'email')!);
    if (key !== null) {
      deps.tasks.run('reset_mail_failed', { account: null }, async () => {
        const account = await findAccountByEmailKey(deps.store.knex, key);
        if (!account || account.disabled) return;
        if (!(await deps.limiter.resetRequest(account.reference_id))) {
          await deps.audit.record('reset_request_limited', { account: account.reference_id, client: clientAddress });
          return;
        }
        // A new request voids the older links.
        await voidTokens(deps.store.knex, account.id, 'reset_password');
        const ttl = deps.config.resetTtlSeconds;
        await mailToken(deps, account, 'reset_password', ttl, (token) => resetMessage(deps.config.publicUrl, account.email, account.name, token, ttl));
        await deps.audit.record('reset_requested', { account: account.reference_id, client: clientAddress });
      });
    }
    return [notify(SAME_ANSWER)];
  },
};

export const resetPassword: ActionDef = {
  onType: 'user_account',
  name: 'reset_password',
  ignoresToken: true,
  async run({ deps, attributes }) {
    const token = stringField(attributes, 'token')!.trim();
    const password = stringField(attributes, 'password')!;
    const confirm = stringField(attributes, 'passwordConfirm')!;
    if (password !== confirm) throw new AppError('password_mismatch', 'password and passwordConfirm differ');
    checkTokenShape(token, 'reset_password');
    // Validate what can be validated before spending the token, so a weak password can be retried.
    // An unknown token is refused here, before the bcrypt work: guessing costs the server nothing.
    const emailKey = await tokenAccountEmailKey(deps.store.knex, token, 'reset_password');
    if (emailKey === null) throw new AppError('token_invalid', 'the reset link is not valid or was already used');
    validatePassword(password, confirm, emailKey, deps.config.passwordMinLength);
    const hash = await deps.passwords.hash(password);
    const account = await redeemToken(deps, token, 'reset_password');
    await deps.store.transaction(async (trx) => {
      // Sessions issued before the reset end here; TOTP stays as it was.
      await bumpAuthVersion(trx, account.id, { password: hash });
      await voidTokens(trx, account.id, 'reset_password');
    });
    await deps.limiter.signinSucceeded(account.email_key);
    await deps.audit.record('password_reset', { account: account.reference_id });
    return [notify('password changed; sign in with the new password')];
  },
};
