/**
 * A directory bind (LDAP simple bind), a way in of the sign-in home: it proves who someone is
 * with an app password or, for an account with no second factor and a password, the password.
 * It counts against the same limits as signin (per account and per address), answers every
 * failure alike after the same hashing work (unknown username, wrong secret, a password where
 * only an app password may bind, a disabled account), and opens no session: an LDAP client binds
 * per login, the app keeps its own session. Failures are audited (signin_failed, method ldap);
 * successful binds are counted, not audited (an app may bind on every request).
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { type AccountRow, NO_PASSWORD } from '../store/accounts';
import { accountForBind } from './app-passwords';
import { passwordFailure } from './failures';
import { refuseIfDisabled } from './signin';
import { USERNAME } from './usernames';

const refused = () => new AppError('invalid_credentials', 'invalid credentials');

export async function directoryBind(s: Services, actor: Actor, username: string, secret: string): Promise<AccountRow> {
  const name = username.toLowerCase();
  // The account and, in the same read, whether the secret is one of its app passwords.
  const found = USERNAME.test(name) ? await accountForBind(s, name, secret) : undefined;
  const account = found?.account;
  const key = account?.email_key ?? null;
  await s.limiter.assertSigninAllowed(key, actor.client ?? 'shell');
  const fail = async (reason: string) => {
    s.counters.signinsFailed++;
    count(s, 'failed');
    await passwordFailure(s, actor, key, account?.reference_id ?? null, 'signin_failed', { method: 'ldap', reason });
    return refused();
  };
  if (!account || secret === '') {
    await s.passwords.dummyVerify(secret);
    throw await fail(account ? 'empty_password' : 'unknown_username');
  }
  // An app password first (read with the account: no hashing).
  if (!found!.appPassword) {
    // The password alone would skip the second factor; without one set, there is none to check.
    if (account.totp_enabled || account.password === NO_PASSWORD) {
      await s.passwords.dummyVerify(secret);
      throw await fail('app_password_required');
    }
    if (!(await s.passwords.verify(secret, account.password)).ok) throw await fail('wrong_password');
  }
  try {
    await refuseIfDisabled(s, actor, account, { method: 'ldap' });
  } catch {
    // Counted and audited as a disabled sign-in; answered as every other failure.
    count(s, 'failed');
    throw refused();
  }
  await s.limiter.signinSucceeded(account.email_key, actor.client ?? 'shell', null);
  s.counters.signinsOk++;
  count(s, 'ok');
  return account;
}

const count = (s: Services, outcome: 'ok' | 'failed') => {
  const binds = s.counters.ldap.binds;
  binds[outcome] = (binds[outcome] ?? 0) + 1;
};
