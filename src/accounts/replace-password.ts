/**
 * Replacing an account's password, the one way every path does it (change_password, the mailed
 * reset, the shell's set-password): the new hash and an auth_version bump in one write (every
 * session issued under the old password ends), the failures counted against the old password
 * cleared (a lockout of the old one says nothing about the new), and one audit row.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { AccountRow, bumpAuthVersion } from '../store/accounts';

export type PasswordEvent = 'password_changed' | 'password_reset' | 'password_set';

export async function replacePassword(
  s: Services,
  actor: Actor,
  account: AccountRow,
  hash: string,
  event: PasswordEvent,
  /** More writes that belong with it (the reset voids its tokens). */
  alongside?: (tx: Tx) => Promise<void>,
): Promise<void> {
  await s.store.transaction(async (tx) => {
    await bumpAuthVersion(tx, account.id, { password: hash });
    if (alongside) await alongside(tx);
  });
  await s.limiter.passwordReplaced(account.email_key);
  await s.audit.record(event, actor, { account: account.reference_id });
}
