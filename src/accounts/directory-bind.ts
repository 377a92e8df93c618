/**
 * A directory bind (LDAP simple bind), a way in through the one sign-in routine: it proves who
 * someone is with an app password or, for an account with no second factor and a password, the
 * password. It counts against the same limits as signin (per account and per address; an unknown
 * username locks out as a known one does), answers every refusal alike after the same hashing
 * work (an unknown username, a wrong secret, a password where only an app password may bind, a
 * locked, disabled or unconfirmed account), and opens no session: an LDAP client binds per login,
 * the app keeps its own session. Failures and successes are audited as every way in's are
 * (signin_failed, signin_ok, method ldap).
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { type AccountRow, NO_PASSWORD } from '../store/accounts';
import { accountForBind } from './app-passwords';
import { signIn } from './signin';
import { checkPassword, noteSourceSignin } from './password-check';
import { USERNAME } from './usernames';

const refused = () => new AppError('invalid_credentials', 'invalid credentials');

/** What a bind proved: the account, its auth_version then, and the app password it used (to check the bind on later requests). */
export interface Bound {
  account: AccountRow;
  appPasswordId: number | null;
}

export async function directoryBind(s: Services, actor: Actor, username: string, secret: string): Promise<Bound> {
  const name = username.toLowerCase();
  let appPasswordId: number | null = null;
  let source: string | undefined;
  try {
    const { account } = await signIn(s, actor, {
      method: 'ldap',
      async claim() {
        // The account and, in the same read, whether the secret is one of its app passwords.
        const found = USERNAME.test(name) ? await accountForBind(s, name, secret) : undefined;
        appPasswordId = found?.appPasswordId ?? null;
        // An unknown username counts under a key of its own, so it locks out as a known one does.
        return { account: found?.account ?? null, limitKey: found?.account.email_key ?? `ldap-uid:${name.slice(0, 100)}` };
      },
      async prove(account) {
        if (!account || secret === '') {
          await s.passwords.dummyVerify(secret);
          return account ? 'empty_password' : 'unknown_username';
        }
        // An app password was matched with the account's read: no hashing.
        if (appPasswordId !== null) return null;
        // The password alone would skip the second factor; without one set, there is none to check.
        if (account.totp_enabled) {
          await s.passwords.dummyVerify(secret);
          return 'app_password_required';
        }
        // A directory source's person binds with the directory's password; an account with no
        // password of its own (passkeys only) needs an app password.
        const check = await checkPassword(s, account, secret);
        source = check.source;
        if (check.source === undefined && account.password === NO_PASSWORD) return 'app_password_required';
        return check.ok ? null : 'wrong_password';
      },
      equalWork: () => s.passwords.dummyVerify(secret),
      refusal: refused,
      // An app password stands for both factors; a password binds only where there is no second one.
      secondFactor: 'proved',
      session: false,
    });
    if (source !== undefined) await noteSourceSignin(s, actor, account, source);
    return { account, appPasswordId };
  } catch (err) {
    // Every refusal alike, a lockout and a disabled or unconfirmed account included; the store being down is said.
    if (err instanceof AppError && err.code !== 'unavailable') throw refused();
    throw err;
  }
}
