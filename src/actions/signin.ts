/**
 * Signin with an email and a password, through the one sign-in routine. Unknown emails and wrong
 * passwords get the same answer after the same bcrypt work, and lock out alike (failures are
 * counted per email), so neither the body, the timing nor a lockout tells whether an account
 * exists. A lockout answers 429 at once, without hashing: its status says it anyway, and an
 * attacker hammering a locked account costs no hash.
 */
import { AppError } from '../errors';
import { emailKeyOrNull, stringField } from '../accounts/validate';
import { findAccountByEmailKey, updateAccount } from '../store/accounts';
import { sessionOf } from './account-helpers';
import { signIn } from '../accounts/signin';
import { checkPassword, noteSourceSignin } from '../accounts/password-check';
import { isAppError } from '../errors';
import type { ActionDef } from './types';

/** argon2, sha512-crypt or PBKDF2: hashes only an import stores (Gatehouse makes bcrypt). */
const importedKind = (stored: string): string | null => {
  const kind = /^\$(argon2(?:id|i|d)|6|pbkdf2(?:-sha256|-sha512)?)\$/.exec(stored)?.[1];
  return kind === undefined ? null : kind === '6' ? 'sha512-crypt' : kind;
};

export const signin: ActionDef = {
  onType: 'user_account',
  name: 'signin',
  input: { email: 'required', password: 'required', otp: 'optional', recovery_code: 'optional' },
  ignoresToken: true,
  async run(ctx) {
    const { s, actor, attributes } = ctx;
    const email = stringField(attributes, 'email')!;
    const password = stringField(attributes, 'password')!;
    const key = emailKeyOrNull(email);
    let needsRehash = false;
    /** The kind of a hash another server made (an import), checked now for the first time. */
    let imported: string | null = null;
    /** The directory source that checked the password, for a synced person. */
    let source: string | undefined;
    const { account, session } = await signIn(s, actor, {
      method: 'password',
      limitKey: key,
      claim: async () => ({ account: (key === null ? undefined : await findAccountByEmailKey(s.store.root, key)) ?? null, limitKey: key }),
      async prove(account) {
        if (!account) {
          await s.passwords.dummyVerify(password);
          return 'unknown_email';
        }
        let check;
        try {
          check = await checkPassword(s, account, password);
        } catch (err) {
          if (isAppError(err) && err.code === 'unavailable') return 'directory_unavailable';
          throw err;
        }
        needsRehash = check.needsRehash;
        source = check.source;
        if (check.ok) imported = importedKind(account.password);
        return check.ok ? null : 'wrong_password';
      },
      refusal: (reason) =>
        reason === 'directory_unavailable'
          ? new AppError('unavailable', 'your directory cannot be reached now: try again in a moment')
          : new AppError('invalid_credentials', 'wrong email or password'),
      secondFactor: { check: attributes },
      session: true,
    });
    if (source !== undefined) await noteSourceSignin(s, actor, account, source);
    if (needsRehash) {
      // Upgrade imported argon2id or old-cost hashes; a failure here must not fail the signin.
      try {
        await updateAccount(s.store.root, account.id, { password: await s.passwords.hash(password) });
        // The first sign-in of an imported person: from now on the account holds Gatehouse's own hash.
        if (imported) await s.audit.record('imported_signin', actor, { account: account.reference_id, hash: imported });
      } catch {
        s.logger.warn('rehash_failed', { account: account.reference_id });
      }
    }
    return { session: sessionOf(session!), message: 'signed in' };
  },
};
