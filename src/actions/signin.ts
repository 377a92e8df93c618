/**
 * Signin. Unknown emails and wrong passwords get the same answer after the same bcrypt work,
 * and lock out alike (failures are counted per email), so neither the body, the timing nor a
 * lockout tells whether an account exists.
 */
import { AppError } from '../errors';
import { emailKeyOrNull, stringField } from '../accounts/validate';
import { passwordFailure } from '../accounts/failures';
import { findAccountByEmailKey, updateAccount } from '../store/accounts';
import { sessionOf } from './account-helpers';
import { completeSignin, refuseIfDisabled } from '../accounts/signin';
import { verifySecondFactor } from '../accounts/second-factor';
import type { ActionDef } from './types';

const refused = () => new AppError('invalid_credentials', 'wrong email or password');

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
    await s.limiter.assertSigninAllowed(key, actor.client ?? 'shell', actor.device ?? null);

    const failed = async (reason: string, account: string | null) => {
      s.counters.signinsFailed++;
      await passwordFailure(s, actor, key, account, 'signin_failed', { reason });
    };

    const account = key === null ? undefined : await findAccountByEmailKey(s.store.root, key);
    if (!account) {
      await s.passwords.dummyVerify(password);
      await failed('unknown_email', null);
      throw refused();
    }
    const check = await s.passwords.verify(password, account.password);
    if (!check.ok) {
      await failed('wrong_password', account.reference_id);
      throw refused();
    }
    const way = { method: 'password', secondFactor: account.totp_enabled } as const;
    await refuseIfDisabled(s, actor, account, way);
    if (account.totp_enabled) await verifySecondFactor(ctx, account);
    const session = sessionOf(await completeSignin(s, actor, account, way));
    if (check.needsRehash) {
      // Upgrade imported argon2id or old-cost hashes; a failure here must not fail the signin.
      try {
        await updateAccount(s.store.root, account.id, { password: await s.passwords.hash(password) });
      } catch {
        s.logger.warn('rehash_failed', { account: account.reference_id });
      }
    }
    return { session, message: 'signed in' };
  },
};
