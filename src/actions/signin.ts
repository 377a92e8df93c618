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
import type { ActionDef } from './types';

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
    const { account, session } = await signIn(s, actor, {
      method: 'password',
      limitKey: key,
      claim: async () => ({ account: (key === null ? undefined : await findAccountByEmailKey(s.store.root, key)) ?? null, limitKey: key }),
      async prove(account) {
        if (!account) {
          await s.passwords.dummyVerify(password);
          return 'unknown_email';
        }
        const check = await s.passwords.verify(password, account.password);
        needsRehash = check.needsRehash;
        return check.ok ? null : 'wrong_password';
      },
      refusal: () => new AppError('invalid_credentials', 'wrong email or password'),
      secondFactor: { check: attributes },
      session: true,
    });
    if (needsRehash) {
      // Upgrade imported argon2id or old-cost hashes; a failure here must not fail the signin.
      try {
        await updateAccount(s.store.root, account.id, { password: await s.passwords.hash(password) });
      } catch {
        s.logger.warn('rehash_failed', { account: account.reference_id });
      }
    }
    return { session: sessionOf(session!), message: 'signed in' };
  },
};
