/**
 * Credential changes: each bumps auth_version, so every token issued before is refused at once,
 * and answers a fresh token for the caller.
 */
import { newPasswordHash, replacePassword } from '../accounts/replace-password';
import { normalizeEmail, stringField } from '../accounts/validate';
import { reloadAccount, revokeSessions } from '../accounts/lifecycle';
import { AppError } from '../errors';
import { emailIsUsername, findAccountByEmailKey, lockAccounts } from '../store/accounts';
import { bumpAuthVersion } from '../accounts/session-ends';
import { newSession } from './account-helpers';
import { callerAccount, confirmPassword } from '../accounts/acting';
import { sendVerification } from '../accounts/mailed-links';
import { assertMaySetPassword, assertRecentSignin } from '../accounts/recent-signin';
import { checkedSkeleton } from '../accounts/lookalikes';
import { ActionDef, said } from './types';
import { assertNotManaged } from '../managed/managed-by';

export const changePassword: ActionDef = {
  onType: 'user_account',
  name: 'change_password',
  whileRecovering: true,
  // Without currentPassword: a password set in a recovery link's session, or by an account that has none (assertMaySetPassword).
  input: { currentPassword: 'optional', password: 'required', passwordConfirm: 'required' },
  async run(ctx) {
    const { s, attributes } = ctx;
    const current = stringField(attributes, 'currentPassword', false);
    const password = stringField(attributes, 'password')!;
    const confirm = stringField(attributes, 'passwordConfirm')!;
    const account = await callerAccount(ctx);
    if (current === undefined || current === '') await assertMaySetPassword(s, ctx.actor, account);
    else await confirmPassword(ctx, account, current);
    const event = current === undefined || current === '' ? 'password_set' : 'password_changed';
    await replacePassword(s, ctx.actor, account, await newPasswordHash(s, password, confirm, account.email_key), event);
    return {
      session: await newSession(ctx, await reloadAccount(s, account.id)),
      message: `password ${event === 'password_set' ? 'set' : 'changed'}; other sessions are signed out`,
    };
  },
};

export const changeEmail: ActionDef = {
  onType: 'user_account',
  name: 'change_email',
  input: { password: 'required', email: 'required' },
  async run(ctx) {
    const { s, attributes } = ctx;
    const password = stringField(attributes, 'password')!;
    const { email, key } = normalizeEmail(stringField(attributes, 'email')!);
    const account = await callerAccount(ctx);
    // A new address is a way in (a reset link goes there): the password given here is the proof.
    await assertRecentSignin(s, ctx.actor, { proving: true });
    await confirmPassword(ctx, account, password);
    if (key === account.email_key && email === account.email) return said('the email address is unchanged');
    await s.store.transaction(async (tx) => {
      await lockAccounts(tx);
      await assertNotManaged(tx, ctx.actor.via, { kind: 'account', id: account.id, part: 'email' });
      const other = await findAccountByEmailKey(tx, key);
      if (other && other.id !== account.id) throw new AppError('email_taken', 'an account with this email already exists');
      if (await emailIsUsername(tx, key, account.id)) throw new AppError('email_taken', 'this email is the username of another account');
      // A look-alike of another account's address is answered as a taken one: a person learns no other account's address.
      const emailSkeleton = await checkedSkeleton(tx, key, { self: account.id, reveal: ctx.actor.principal.isAdmin });
      // A new address is unverified until its owner confirms it.
      await bumpAuthVersion(tx, account.id, {
        email,
        email_key: key,
        email_skeleton: emailSkeleton,
        email_verified: key === account.email_key && account.email_verified,
      });
    });
    await s.audit.record('email_changed', ctx.actor, { account: account.reference_id });
    const fresh = await reloadAccount(s, account.id);
    if (!fresh.email_verified) sendVerification(s, fresh);
    return { session: await newSession(ctx, fresh), message: 'email changed; other sessions are signed out' };
  },
};

export const signoutEverywhere: ActionDef = {
  onType: 'user_account',
  name: 'signout_everywhere',
  whileRecovering: true,
  input: {},
  async run(ctx) {
    await revokeSessions(ctx.s, ctx.actor, await callerAccount(ctx));
    return said('every session, this one included, is signed out');
  },
};
