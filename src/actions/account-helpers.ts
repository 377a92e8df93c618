/** What the self-service actions share: the caller's account, its password check, a fresh token. */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import type { ActionContext, ActionItem } from './types';
import { findAccountById } from '../store/accounts';
import type { AccountRow } from '../store/rows';

export async function callerAccount(ctx: ActionContext): Promise<AccountRow> {
  const id = ctx.principal.accountId;
  if (id === null) throw new AppError('unauthenticated', 'sign in first');
  const account = await findAccountById(ctx.deps.store.knex, id);
  if (!account) throw new AppError('unauthenticated', 'sign in first');
  return account;
}

/**
 * Re-checks the caller's password before a sensitive change. Wrong guesses count toward the
 * same lockout as failed signins, so this is no side door for guessing.
 */
export async function confirmPassword(ctx: ActionContext, account: AccountRow, password: string): Promise<void> {
  const { deps } = ctx;
  await deps.limiter.assertSigninAllowed(account.email_key, ctx.clientAddress);
  const check = await deps.passwords.verify(password, account.password);
  if (!check.ok) {
    const locked = await deps.limiter.signinFailed(account.email_key, ctx.clientAddress);
    await deps.audit.record('password_check_failed', { account: account.reference_id, client: ctx.clientAddress });
    if (locked) await deps.audit.record('lockout', { account: account.reference_id, kind: 'signin' }, 'warn');
    throw new AppError('invalid_credentials', 'the password is wrong');
  }
}

export function tokenItem(deps: Deps, account: AccountRow): ActionItem {
  const token = deps.tokens.sign({ referenceId: account.reference_id, email: account.email, name: account.name, authVersion: account.auth_version });
  return { ResponseType: 'client.store.set', Attributes: { key: 'token', value: token } };
}

/** After a change that bumped auth_version: the account as it is now, for a fresh token. */
export async function reload(deps: Deps, id: number): Promise<AccountRow> {
  const account = await findAccountById(deps.store.knex, id);
  if (!account) throw new AppError('not_found', 'the account no longer exists');
  return account;
}
