/**
 * Finishing a sign-in, once for every way in. The ways differ only in how they prove who someone
 * is (a password, a passkey's signature, another provider's ID token; next: an LDAP bind, an app
 * password, an API key, a device's confirmation). Once that is proved, the same account rules
 * apply, in one order, with one wording per refusal:
 *
 *   1. `refuseIfDisabled`, before any second factor: a failed sign-in, counted and audited.
 *   2. The way's own second factor (TOTP), where the account has one and the way asks it.
 *   3. `completeSignin`: the address confirmed (where --require-verified-email asks it), the
 *      sign-in delays of this address and device lifted, counted, audited, a new session.
 *
 * A refusal that tells something about the account (disabled, unconfirmed) comes only after the
 * caller proved who they are, and the unconfirmed address only after the second factor.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import type { SigninMethod } from '../store/sessions';
import { type Issued, openSession } from './sessions';

export interface Way {
  method: SigninMethod;
  /** Whether a second factor was passed (TOTP, or a passkey's user verification). */
  secondFactor: boolean;
  /** What the audit says of this way (which passkey, which provider). */
  details?: Record<string, string>;
}

export const UNCONFIRMED_EMAIL = 'confirm your email address first (request_verification sends a new link)';

/** A way as the audit names it: the ways that open sessions, and the directory bind (no session). */
type Named = { method: SigninMethod | 'ldap'; details?: Record<string, string> };

/** The audit's words for a way: a password sign-in names no method (as it always has). */
const said = (way: Named) => ({ ...(way.method === 'password' ? {} : { method: way.method }), ...way.details });

/** A disabled account is a failed sign-in, whichever way it came (403 forbidden). */
export async function refuseIfDisabled(s: Services, actor: Actor, account: AccountRow, way: Named): Promise<void> {
  if (!account.disabled) return;
  s.counters.signinsFailed++;
  await s.audit.record('signin_failed', actor, { account: account.reference_id, ...said(way), reason: 'disabled' });
  throw new AppError('forbidden', 'this account is disabled');
}

/** The last account rules, then the session: every way in ends here. */
export async function completeSignin(s: Services, actor: Actor, account: AccountRow, way: Way): Promise<Issued> {
  await refuseIfDisabled(s, actor, account, way);
  if (s.config.requireVerifiedEmail && !account.email_verified) {
    await s.audit.record('signin_failed', actor, { account: account.reference_id, ...said(way), reason: 'unverified' });
    throw new AppError('email_unverified', UNCONFIRMED_EMAIL);
  }
  await s.limiter.signinSucceeded(account.email_key, actor.client ?? 'shell', actor.device ?? null);
  s.counters.signinsOk++;
  await s.audit.record('signin_ok', actor, { account: account.reference_id, ...said(way) });
  return openSession(s, actor, account, way.secondFactor, way.method);
}
