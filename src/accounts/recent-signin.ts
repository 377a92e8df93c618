/**
 * A recent sign-in before a new way in. Adding a passkey, an API key, an app password or TOTP,
 * changing the email address, and (from the console) making a SCIM token or an invitation each
 * give someone a lasting way in; a session cookie or access token left in a browser, copied or
 * stolen, must not be enough for that. So the caller's session must have proved who the person
 * is within --recent-signin: its sign-in, or a password, code or passkey entered again in it
 * (the reauthenticate action). Otherwise: 403 reauthentication_required, and the pages ask.
 *
 * - A session opened by another provider is never enough on its own: that provider, not this
 *   server, checked the person, and whoever controls the provider account would gain a way in
 *   here that outlives it. It needs a second factor checked here (at its sign-in or since) or the
 *   password entered again. Except for an account that has nothing else to ask (no password, no
 *   passkey, no TOTP): there a recent sign-in with its provider is all the proof it can give.
 * - A session opened by a code mailed to the address stands as a provider's: the mailbox checked
 *   the person, and whoever reads it must not gain a lasting way in from that alone.
 * - A session opened by an administrator's recovery link may add a passkey or a password, within
 *   15 minutes of its opening, and nothing else (it ends then too).
 * - The operator at the shell is not a self-service session: never asked.
 * - An API key (a request without a session) never adds a way in, however recent: a script's key
 *   must not mint lasting credentials that survive its revocation.
 *
 * The rule holds at the write. A change made in two requests (passkey options, then the
 * registration; TOTP's enrolment, then the code that confirms it; a link begun here, finished at
 * the provider's callback) is checked again by the request that stores the new way in, in the
 * transaction that stores it, with the session read then: a check at the first step alone would
 * stretch the window by however long the ceremony may last. A password entered with a first
 * step counts as entered again (the session's authenticated_at moves), so the second step, made
 * within the window of that password, passes.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import { actorOf } from '../access/caller';
import type { CredentialOperations } from './named-credentials';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { type AccountRow, findAccountById } from '../store/accounts';
import { countPasskeys } from '../store/passkeys';
import { findSession, reauthenticated, type SessionRow } from '../store/sessions';
import { type Acting, confirmPassword } from './acting';
import { hasPassword } from './ways-in';
import { RECOVERY_ONLY } from '../permission/check';

/** Where a caller stands: recent enough, or what it lacks. */
export type Recency = 'recent' | 'stale' | 'provider' | 'recovery' | 'sessionless';

/** What a change adds: a recovery link's session may add only a passkey or a password. */
export type Adds = 'passkey' | 'password' | 'other';

/** How long a recovery link's session may add a passkey or a password (it ends then too). */
export const RECOVERY_WINDOW_MS = 15 * 60 * 1000;

const MESSAGES: Record<Exclude<Recency, 'recent' | 'sessionless'>, string> = {
  recovery: RECOVERY_ONLY,
  stale: 'confirm it is you first: this change needs a sign-in in the last few minutes (enter your password, a code or a passkey again with reauthenticate)',
  provider:
    'confirm it is you first: a sign-in with another provider or a mailed code is not enough for this change (enter your password, a code or a passkey again with reauthenticate)',
};

/** Whether an account has anything to ask besides its upstream provider: a password, a passkey or TOTP. */
export async function hasOwnFactor(s: Services, account: AccountRow, tx: Tx = s.store.root): Promise<boolean> {
  return hasPassword(account) || account.totp_enabled || (await countPasskeys(tx, account.id)) > 0;
}

/** Whether this session proved who the person is within the window, by a proof this server checked. */
export async function sessionRecency(
  s: Services,
  session: SessionRow | undefined,
  account: AccountRow,
  tx: Tx = s.store.root,
  adds: Adds = 'other',
): Promise<Recency> {
  const now = s.clock.now();
  // A session of another account proves nothing of this one.
  if (!session || session.account_id !== account.id || session.ended_at !== null) return 'stale';
  // A recovery link's session: a passkey or a password, within its window, and nothing else.
  if (session.method === 'recovery') return adds !== 'other' && now - session.created_at < RECOVERY_WINDOW_MS ? 'recent' : 'recovery';
  if (now - session.authenticated_at > s.config.recentSignin * 1000) return 'stale';
  // A code mailed to the address stands as a provider's sign-in does: the mailbox, not this server, checked the person.
  if (session.method !== 'provider' && session.method !== 'mail') return 'recent';
  // A code checked here (at the provider sign-in or since), or anything entered again after the
  // session opened (reauthenticated moves authenticated_at past created_at).
  if (session.two_factor || session.authenticated_at > session.created_at) return 'recent';
  return (await hasOwnFactor(s, account, tx)) ? 'provider' : 'recent';
}

/** The standing of one session of an account, both read through `tx` (the transaction of the write, at the write). */
async function standingOf(s: Services, tx: Tx, accountId: number, sessionId: string | null, adds: Adds = 'other'): Promise<Recency> {
  const account = await findAccountById(tx, accountId);
  if (!account) throw new AppError('unauthenticated', 'sign in first');
  return sessionRecency(s, sessionId === null ? undefined : await findSession(tx, sessionId), account, tx, adds);
}

/** The caller's standing; `recent` at the shell. */
export async function recency(s: Services, actor: Actor, tx: Tx = s.store.root, adds: Adds = 'other'): Promise<Recency> {
  if (actor.via === 'cli') return 'recent';
  if (actor.session === null || actor.principal.accountId === null) return 'sessionless';
  return standingOf(s, tx, actor.principal.accountId, actor.session, adds);
}

/**
 * Refuses a change that adds a way in unless the caller signed in recently (see above).
 * `proving`: the request carries the password and the action checks it next (change_email,
 * totp_enroll, passkey_options with a password): that is a password entered again, so only a
 * caller without a session is refused here, before the password is tried.
 * `tx`: the transaction that writes the change, when the check is made in it (see above).
 */
export async function assertRecentSignin(s: Services, actor: Actor, o: { proving?: boolean; tx?: Tx; adds?: Adds } = {}): Promise<void> {
  if (actor.via !== 'cli' && actor.principal.accountId === null) throw new AppError('unauthenticated', 'sign in first');
  const standing = await recency(s, actor, o.tx, o.adds);
  if (standing === 'recent') return;
  if (standing === 'sessionless') {
    throw new AppError('forbidden', 'an API key cannot add a way in or make credentials: sign in (a session) to do this', { reason: 'api_key_not_a_session' });
  }
  if (standing === 'recovery') throw new AppError('reauthentication_required', MESSAGES.recovery);
  if (o.proving) return;
  throw new AppError('reauthentication_required', MESSAGES[standing]);
}

/**
 * A password set without the current one: in a recovery link's session, within its window (the
 * person who lost everything does not know it), or by an account that has none yet (a passkey or
 * provider account), after a recent sign-in as for any new way in. An account that has a password
 * changes it with the current one everywhere else.
 */
export async function assertMaySetPassword(s: Services, actor: Actor, account: AccountRow): Promise<void> {
  const session = actor.session ? await findSession(s.store.root, actor.session) : undefined;
  const recovering = session?.method === 'recovery' && session.account_id === account.id;
  if (!recovering && hasPassword(account)) throw new AppError('invalid_input', 'currentPassword is required: enter your current password to change it');
  await assertRecentSignin(s, actor, { adds: 'password' });
}

/**
 * The rule at the write of a change begun by an earlier request, for the session that began it
 * (a provider's callback comes without the session's token: its flow names the session). Read
 * through `tx`, the transaction that stores the new way in.
 */
export async function assertSessionRecent(s: Services, tx: Tx, accountId: number, sessionId: string | null): Promise<void> {
  const standing = await standingOf(s, tx, accountId, sessionId);
  if (standing === 'recent') return;
  throw new AppError('reauthentication_required', MESSAGES[standing === 'provider' || standing === 'recovery' ? standing : 'stale']);
}

/**
 * A password entered with the first step of a change that adds a way in (passkey options, TOTP's
 * enrolment): checked now, and then it is a password entered again in this session, as the
 * reauthenticate action's (authenticated_at moves). The step that writes the change checks the
 * rule against the session as it then stands, so that step must come within the window of this
 * password, not of an older sign-in.
 */
export async function confirmPasswordAgain(ctx: Acting, account: AccountRow, password: string): Promise<void> {
  await confirmPassword(ctx, account, password);
  const sessionId = ctx.actor.session;
  if (sessionId !== null && !(await reauthenticated(ctx.s.store.root, sessionId, null))) {
    throw new AppError('unauthenticated', 'this session has ended; sign in again');
  }
}

/** Named secrets (API keys, app passwords) made only after a recent sign-in: the caller's own, and an administrator's for any account. */
export function afterRecentSignin<View, Input>(s: Services, ops: CredentialOperations<View, Input>): CredentialOperations<View, Input> {
  return {
    ...ops,
    async add(actor, email, input) {
      await assertRecentSignin(s, actor);
      return ops.add(actor, email, input);
    },
    async addMine(caller, input) {
      await assertRecentSignin(s, await actorOf(s, caller));
      return ops.addMine(caller, input);
    },
  };
}
