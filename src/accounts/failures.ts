/**
 * A failed credential check, in one place: count it toward the lockout, audit it, and audit
 * the lockout when this failure caused it. Signin, password re-checks and second factors share
 * these, so every path locks the same way.
 */
import type { Actor } from '../actor';
import type { LogFields } from '../log';
import type { Services } from '../services';
import type { TotpAttempt } from '../runtime/limiter';
import { findAccountByReference } from '../store/accounts';
import { sendUnlock } from './mailed-links';

/** A wrong password (or unknown email): counts per email and address, per email, and per address. */
export async function passwordFailure(
  s: Services,
  actor: Actor,
  emailKey: string | null,
  account: string | null,
  event: 'signin_failed' | 'password_check_failed',
  fields: LogFields = {},
): Promise<void> {
  const locked = await s.limiter.signinFailed(emailKey, actor);
  await s.audit.record(event, actor, { account, ...fields });
  if (locked) {
    s.counters.lockouts++;
    await s.audit.record('lockout', actor, { account, kind: locked === 'account' ? 'signin' : 'signin_address' }, 'warn');
  }
  // The account's failures reached the ceiling: its owner gets the link that lifts the delay.
  if (locked === 'account' && account !== null) {
    const row = await findAccountByReference(s.store.root, account);
    if (row) sendUnlock(s, row);
  }
}

/** A wrong, replayed or used-up second factor: its attempt (taken before the check) stays counted. */
export async function secondFactorFailure(
  s: Services,
  actor: Actor,
  attempt: TotpAttempt,
  event: 'totp_failed' | 'totp_replay' | 'recovery_code_failed',
): Promise<void> {
  const account = attempt.referenceId;
  const locked = s.limiter.totpFailed(attempt);
  await s.audit.record(event, actor, { account });
  if (locked) {
    s.counters.lockouts++;
    await s.audit.record('lockout', actor, { account, kind: 'totp' }, 'warn');
  }
}
