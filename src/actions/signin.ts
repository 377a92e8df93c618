/**
 * Signin. Unknown emails and wrong passwords get the same answer after the same bcrypt work,
 * so neither the body nor the timing tells whether an account exists.
 */
import { AppError } from '../errors';
import { emailKeyOrNull, stringField } from '../accounts/validate';
import { findAccountByEmailKey, updateAccount } from '../store/accounts';
import { ActionDef, notify } from './types';

const refused = () => new AppError('invalid_credentials', 'wrong email or password');

export const signin: ActionDef = {
  onType: 'user_account',
  name: 'signin',
  ignoresToken: true,
  async run({ deps, attributes, clientAddress }) {
    const email = stringField(attributes, 'email')!;
    const password = stringField(attributes, 'password')!;
    const key = emailKeyOrNull(email);
    const account = key === null ? undefined : await findAccountByEmailKey(deps.store.knex, key);
    if (!account) {
      await deps.passwords.dummyVerify(password);
      deps.counters.signinsFailed++;
      deps.logger.info('signin_failed', { account: null, reason: 'unknown_email', client: clientAddress });
      throw refused();
    }
    const check = await deps.passwords.verify(password, account.password);
    if (!check.ok) {
      deps.counters.signinsFailed++;
      deps.logger.info('signin_failed', { account: account.reference_id, reason: 'wrong_password', client: clientAddress });
      throw refused();
    }
    if (account.disabled) {
      deps.counters.signinsFailed++;
      deps.logger.info('signin_failed', { account: account.reference_id, reason: 'disabled', client: clientAddress });
      throw new AppError('forbidden', 'this account is disabled');
    }
    if (check.needsRehash) {
      // Upgrade imported argon2id or old-cost hashes; a failure here must not fail the signin.
      try {
        await updateAccount(deps.store.knex, account.id, { password: await deps.passwords.hash(password) });
      } catch {
        deps.logger.warn('rehash_failed', { account: account.reference_id });
      }
    }
    const token = deps.tokens.sign({
      referenceId: account.reference_id,
      email: account.email,
      name: account.name,
      authVersion: account.auth_version,
    });
    deps.counters.signinsOk++;
    deps.logger.info('signin_ok', { account: account.reference_id, client: clientAddress });
    return [{ ResponseType: 'client.store.set', Attributes: { key: 'token', value: token } }, notify('signed in')];
  },
};
