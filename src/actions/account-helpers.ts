/** What the self-service actions share: a fresh token as an action answers it. */
import type { ActionContext } from './types';
import type { AccountRow } from '../store/accounts';
import { findSession } from '../store/sessions';
import { Issued, openSession } from '../accounts/sessions';

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
  const secondFactor = twoFactor === undefined ? (current?.second_factor ?? null) : null;
  return sessionOf(await openSession(ctx.s, ctx.actor, account, inherited, method, { secondFactor }));
}
