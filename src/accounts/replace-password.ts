/**
 * Replacing an account's password, the one way every path does it (change_password, the mailed
 * reset, the shell's set-password): the new hash and an auth_version bump in one write (every
 * session issued under the old password ends), the failures counted against the old password
 * cleared (a lockout of the old one says nothing about the new), and one audit row. A new
 * password is checked and hashed once, by newPasswordHash, for those three and for no one else.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import type { AccountRow } from '../store/accounts';
import { bumpAuthVersion } from './session-ends';
import { validatePassword } from './validate';
import { assertNotManaged } from '../managed/managed-by';

/**
 * A new password's hash, after the rules every new password meets (length, not common, not the
 * email, equal to its confirmation when one is given). Callers check who is asking first, so a
 * refused request costs no hashing.
 */
export async function newPasswordHash(s: Services, password: string, confirm: string | undefined, emailKey: string): Promise<string> {
  validatePassword(password, confirm, emailKey, s.config.passwordMinLength);
  return s.passwords.hash(password);
}

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
    // A directory source's person changes the password in the directory (refused: rolled back).
    await assertNotManaged(tx, actor.via, { kind: 'account', id: account.id, part: 'password' });
    if (alongside) await alongside(tx);
  });
  await s.limiter.passwordReplaced(account.email_key);
  await s.audit.record(event, actor, { account: account.reference_id });
}
