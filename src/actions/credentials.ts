/**
 * Credential changes: each bumps auth_version, so every token issued before is refused at once,
 * and answers a fresh token for the caller.
 */
import { AppError } from '../errors';
import { normalizeEmail, stringField, validatePassword } from '../accounts/validate';
import { bumpAuthVersion, findAccountByEmailKey, lockAccounts } from '../store/accounts';
import { isUniqueViolation } from '../store/connection';
import { callerAccount, confirmPassword, reload, tokenItem } from './account-helpers';
import { sendVerification } from './verification';
import { ActionDef, notify } from './types';

export const changePassword: ActionDef = {
  onType: 'user_account',
  name: 'change_password',
  async run(ctx) {
    const { deps, attributes } = ctx;
    const current = stringField(attributes, 'currentPassword')!;
    const password = stringField(attributes, 'password')!;
    const confirm = stringField(attributes, 'passwordConfirm')!;
    const account = await callerAccount(ctx);
    validatePassword(password, confirm, account.email_key, deps.config.passwordMinLength);
    await confirmPassword(ctx, account, current);
    const hash = await deps.passwords.hash(password);
    await bumpAuthVersion(deps.store.knex, account.id, { password: hash });
    await deps.audit.record('password_changed', { account: account.reference_id });
    return [tokenItem(deps, await reload(deps, account.id)), notify('password changed; other sessions are signed out')];
  },
};

export const changeEmail: ActionDef = {
  onType: 'user_account',
  name: 'change_email',
  async run(ctx) {
    const { deps, attributes } = ctx;
    const password = stringField(attributes, 'password')!;
    const { email, key } = normalizeEmail(stringField(attributes, 'email')!);
    const account = await callerAccount(ctx);
    await confirmPassword(ctx, account, password);
    if (key === account.email_key && email === account.email) return [notify('the email address is unchanged')];
    try {
      await deps.store.transaction(async (trx) => {
        await lockAccounts(trx);
        const other = await findAccountByEmailKey(trx, key);
        if (other && other.id !== account.id) throw new AppError('email_taken', 'an account with this email already exists');
        // A new address is unverified until its owner confirms it.
        await bumpAuthVersion(trx, account.id, { email, email_key: key, email_verified: key === account.email_key && account.email_verified });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('email_taken', 'an account with this email already exists');
      throw err;
    }
    await deps.audit.record('email_changed', { account: account.reference_id });
    const fresh = await reload(deps, account.id);
    if (!fresh.email_verified) sendVerification(deps, fresh);
    return [tokenItem(deps, fresh), notify('email changed; other sessions are signed out')];
  },
};

export const signoutEverywhere: ActionDef = {
  onType: 'user_account',
  name: 'signout_everywhere',
  async run(ctx) {
    const account = await callerAccount(ctx);
    await bumpAuthVersion(ctx.deps.store.knex, account.id);
    await ctx.deps.audit.record('sessions_revoked', { account: account.reference_id, via: 'signout_everywhere' });
    return [notify('every session, this one included, is signed out')];
  },
};
