/**
 * Who is acting, on which services: what every domain operation on "the caller's own account"
 * takes (an action's context is one; so is a page's or a provider flow's). The caller's account
 * and the password check before a sensitive change live here once.
 */
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { actorOf } from '../access/caller';
import { RECOVERY_ONLY } from '../permission/check';
import { type AccountRow, findAccountById } from '../store/accounts';
import { passwordFailure } from './failures';
import { checkPassword } from './password-check';

export interface Acting {
  s: Services;
  actor: Actor;
}

/**
 * The caller and its account, for the caller's own things (keys, app passwords, shell, language):
 * `change` for a write, which a recovery link's session may not make (it adds a passkey or a
 * password, through their actions, and nothing else).
 */
export async function ownAccount(s: Services, caller: Caller, o: { change: boolean }): Promise<Acting & { account: AccountRow }> {
  const actor = await actorOf(s, caller);
  if (o.change && actor.principal.recovering) throw new AppError('reauthentication_required', RECOVERY_ONLY);
  return { s, actor, account: await callerAccount({ s, actor }) };
}

/** The signed-in caller's account, or 401: a deleted account's token is no way in. */
export async function callerAccount({ s, actor }: Acting): Promise<AccountRow> {
  const id = actor.principal.accountId;
  if (id === null) throw new AppError('unauthenticated', 'sign in first');
  const account = await findAccountById(s.store.root, id);
  if (!account) throw new AppError('unauthenticated', 'sign in first');
  return account;
}

/**
 * Re-checks the caller's password before a sensitive change. Wrong guesses count toward the
 * same lockout as failed signins, so this is no side door for guessing.
 */
export async function confirmPassword({ s, actor }: Acting, account: AccountRow, password: string): Promise<void> {
  await s.limiter.assertSigninAllowed(account.email_key, actor);
  const check = await checkPassword(s, account, password);
  if (!check.ok) {
    await passwordFailure(s, actor, account.email_key, account.reference_id, 'password_check_failed');
    throw new AppError('invalid_credentials', 'the password is wrong');
  }
}
