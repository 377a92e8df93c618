/**
 * Signin. Unknown emails and wrong passwords get the same answer after the same bcrypt work,
 * and lock out alike (failures are counted per email), so neither the body, the timing nor a
 * lockout tells whether an account exists.
 */
import { AppError } from '../errors';
import { emailKeyOrNull, stringField } from '../accounts/validate';
import { findAccountByEmailKey, updateAccount } from '../store/accounts';
import { tokenItem } from './account-helpers';
import { verifySecondFactor } from './second-factor';
import { ActionDef, notify } from './types';

const refused = () => new AppError('invalid_credentials', 'wrong email or password');

export const signin: ActionDef = {
  onType: 'user_account',
  name: 'signin',
  ignoresToken: true,
  async run(ctx) {
    const { deps, attributes, clientAddress } = ctx;
    const email = stringField(attributes, 'email')!;
    const password = stringField(attributes, 'password')!;
    const key = emailKeyOrNull(email);
    await deps.limiter.assertSigninAllowed(key, clientAddress);

    const failed = async (reason: string, account: string | null) => {
      deps.counters.signinsFailed++;
      const locked = await deps.limiter.signinFailed(key, clientAddress);
      await deps.audit.record('signin_failed', { account, reason, client: clientAddress });
      if (locked) await deps.audit.record('lockout', { account, kind: 'signin' }, 'warn');
    };

    const account = key === null ? undefined : await findAccountByEmailKey(deps.store.knex, key);
    if (!account) {
      await deps.passwords.dummyVerify(password);
      await failed('unknown_email', null);
      throw refused();
    }
    const check = await deps.passwords.verify(password, account.password);
    if (!check.ok) {
      await failed('wrong_password', account.reference_id);
      throw refused();
    }
    if (account.disabled) {
      deps.counters.signinsFailed++;
      await deps.audit.record('signin_failed', { account: account.reference_id, reason: 'disabled', client: clientAddress });
      throw new AppError('forbidden', 'this account is disabled');
    }
    if (account.totp_enabled) await verifySecondFactor(ctx, account);
    if (deps.config.requireVerifiedEmail && !account.email_verified) {
      await deps.audit.record('signin_failed', { account: account.reference_id, reason: 'unverified', client: clientAddress });
      throw new AppError('email_unverified', 'confirm your email address first (request_verification sends a new link)');
    }
    await deps.limiter.signinSucceeded(account.email_key);
    if (check.needsRehash) {
      // Upgrade imported argon2id or old-cost hashes; a failure here must not fail the signin.
      try {
        await updateAccount(deps.store.knex, account.id, { password: await deps.passwords.hash(password) });
      } catch {
        deps.logger.warn('rehash_failed', { account: account.reference_id });
      }
    }
    deps.counters.signinsOk++;
    await deps.audit.record('signin_ok', { account: account.reference_id, client: clientAddress });
    return [tokenItem(deps, account), notify('signed in')];
  },
};
