/** What the self-service actions share: the caller's account, its password check, a fresh token. */
import { AppError } from '../errors';
import type { ActionContext } from './types';
import { AccountRow, findAccountById } from '../store/accounts';
import { findSession } from '../store/sessions';
import { passwordFailure } from '../accounts/failures';
import { Issued, openSession } from '../accounts/sessions';

export async function callerAccount(ctx: ActionContext): Promise<AccountRow> {
  const id = ctx.actor.principal.accountId;
  if (id === null) throw new AppError('unauthenticated', 'sign in first');
  const account = await findAccountById(ctx.s.store.root, id);
  if (!account) throw new AppError('unauthenticated', 'sign in first');
  return account;
}

/**
 * Re-checks the caller's password before a sensitive change. Wrong guesses count toward the
 * same lockout as failed signins, so this is no side door for guessing.
 */
export async function confirmPassword(ctx: ActionContext, account: AccountRow, password: string): Promise<void> {
  const { s, actor } = ctx;
  await s.limiter.assertSigninAllowed(account.email_key, actor.client ?? 'shell');
  const check = await s.passwords.verify(password, account.password);
  if (!check.ok) {
    await passwordFailure(s, actor, account.email_key, account.reference_id, 'password_check_failed');
    throw new AppError('invalid_credentials', 'the password is wrong');
  }
}

/** A session's tokens as an action answers them. */
export const sessionOf = (issued: Issued) => ({ token: issued.token, refreshToken: issued.refreshToken });

/**
 * Opens a new session for the account as it is now: its tokens. `twoFactor`: whether it passed a
 * second factor; left out, the new session keeps what the caller's session had (a password change
 * does not turn a two-factor session into a password-only one, nor the reverse).
 */
export async function newSession(ctx: ActionContext, account: AccountRow, twoFactor?: boolean): Promise<{ token: string; refreshToken: string }> {
  const current = ctx.actor.session ? await findSession(ctx.s.store.root, ctx.actor.session) : undefined;
  const inherited = twoFactor ?? current?.two_factor ?? false;
  // A session opened from a signed-in one keeps its method (amr); a password signin has none to keep.
  const method = current?.method ?? 'password';
  return sessionOf(await openSession(ctx.s, ctx.actor, account, inherited, method));
}
