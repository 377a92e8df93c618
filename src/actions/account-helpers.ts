/** What the self-service actions share: a fresh token as an action answers it. */
import type { ActionContext } from './types';
import type { AccountRow } from '../store/accounts';
import { type Issued, reopenSession } from '../accounts/sessions';

/** A session's tokens as an action answers them. */
export const sessionOf = (issued: Issued) => ({ token: issued.token, refreshToken: issued.refreshToken });

/**
 * Opens a new session for the account as it is now, after a change that ended its sessions: its
 * tokens. The caller's session's facts are carried (accounts/sessions.ts carriedFacts: its way, its
 * provider's amr, its second factor); `twoFactor` given: the change made it two-factor or not.
 */
export async function newSession(ctx: ActionContext, account: AccountRow, twoFactor?: boolean): Promise<{ token: string; refreshToken: string }> {
  return sessionOf(await reopenSession(ctx.s, ctx.actor, account, twoFactor));
}
