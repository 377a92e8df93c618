/** What the self-service actions share: the caller's account, its password check, a fresh token. */
import { AppError } from '../errors';
import type { ActionContext, ActionItem } from './types';
import { AccountRow, findAccountById } from '../store/accounts';
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

/** The items that hand a client its tokens: `token` (as clients of the original system read it) and `refresh_token`. */
export function tokenItems(issued: Issued): ActionItem[] {
  return [
    { ResponseType: 'client.store.set', Attributes: { key: 'token', value: issued.token } },
    { ResponseType: 'client.store.set', Attributes: { key: 'refresh_token', value: issued.refreshToken } },
  ];
}

/** Opens a new session for the account as it is now and answers its tokens. */
export async function sessionItems(ctx: ActionContext, account: AccountRow): Promise<ActionItem[]> {
  return tokenItems(await openSession(ctx.s, ctx.actor, account));
}
