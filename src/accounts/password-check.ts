/**
 * Checking an account's password, the one way every password sign-in does (the sign-in form, a
 * bind to Gatehouse's own directory, a password confirmed again): the account's own hash, or, for a
 * person a directory source brought, a bind to that directory as them. Either way the same hashing
 * work is paid, so the answer's time does not tell the two kinds of account apart.
 *
 * With --keep-passwords, a password the directory accepted is kept as Gatehouse's own hash
 * (`needsRehash`), so the directory can later be retired. A directory that cannot be reached is
 * an AppError('unavailable'): the sign-in fails clearly and no one is locked out for it.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { entryOfAccount, markFirstSignin } from '../store/sources';
import type { VerifyResult } from '../auth/passwords';

export interface PasswordCheck extends VerifyResult {
  /** The directory source that checked it, for a synced person. */
  source?: string;
}

export async function checkPassword(s: Services, account: AccountRow, password: string): Promise<PasswordCheck> {
  // Only a person a source brought (origin ldap) may be one: the others cost no read here.
  const managed = account.origin === 'ldap' ? await entryOfAccount(s.store.root, account.id) : undefined;
  // A synced person's own hash (kept passwords) or none, which pays the dummy's work.
  const local = await s.passwords.verify(password, account.password);
  if (!managed) return local;
  const { source, entry } = managed;
  const outcome = await s.directoryPasswords(source, entry.entry_id, password);
  if (outcome !== 'ok') return { ok: false, needsRehash: false, source: source.name };
  return { ok: true, needsRehash: source.keep_passwords && !local.ok, source: source.name };
}

/** After a synced person's sign-in: their first is audited as such, once. */
export async function noteSourceSignin(s: Services, actor: Actor, account: AccountRow, source: string): Promise<void> {
  if (await markFirstSignin(s.store.root, account.id)) await s.audit.record('imported_signin', actor, { account: account.reference_id, source });
}
