/**
 * Signing in with an email and a password, through the one sign-in routine. Unknown emails and
 * wrong passwords get the same answer after the same bcrypt work, and lock out alike (failures are
 * counted per email), so neither the body, the timing nor a lockout tells whether an account
 * exists. A lockout answers 429 at once, without hashing: its status says it anyway, and an
 * attacker hammering a locked account costs no hash.
 *
 * The account's second factor is met one of two ways: the code comes with the password (the
 * signin action: an app's own screen sends both), or it is a step of its own (the sign-in page):
 * the password's proof is held for this browser, for a few minutes, and the code finishes it
 * (finishPasswordStep), so the person types the password once.
 */
import { randomBytes } from 'node:crypto';
import { AppError, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { findAccountByEmailKey, findAccountById, updateAccount, type AccountRow } from '../store/accounts';
import { consumeToken, holdToken, restoreToken } from '../store/account-tokens';
import { emailKeyOrNull } from './validate';
import { checkPassword, noteSourceSignin } from './password-check';
import { signIn, signInWithSecondFactor, type SigninResult } from './signin';

/** How long a held step waits for its code. */
const STEP_TTL_MS = 5 * 60 * 1000;

/** argon2, sha512-crypt or PBKDF2: hashes only an import stores (Gatehouse makes bcrypt). */
const importedKind = (stored: string): string | null => {
  const kind = /^\$(argon2(?:id|i|d)|6|pbkdf2(?:-sha256|-sha512)?)\$/.exec(stored)?.[1];
  return kind === undefined ? null : kind === '6' ? 'sha512-crypt' : kind;
};

const PASSWORD_WAY = { method: 'password', session: true } as const;
const MAIL_WAY = { method: 'mail', session: true } as const;

/**
 * The password's way in, and what follows a right password: an imported or old-cost hash is
 * replaced by Gatehouse's own, and a synced person's first sign-in is noted. `secondFactor`: the
 * code the request carries (`check`), or a step of its own (`step`).
 */
export async function passwordSignin(
  s: Services,
  actor: Actor,
  input: { email: string; password: string },
  secondFactor: { check: Record<string, unknown> } | 'step',
): Promise<SigninResult> {
  const { email, password } = input;
  const key = emailKeyOrNull(email);
  let needsRehash = false;
  /** The kind of a hash another server made (an import), checked now for the first time. */
  let imported: string | null = null;
  /** The directory source that checked the password, for a synced person. */
  let source: string | undefined;
  const result = await signIn(s, actor, {
    ...PASSWORD_WAY,
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
    secondFactor,
    session: true,
  });
  const { account } = result;
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
  return result;
}

/**
 * A held step's secret: its handle (random; with the account's auth_version, so that a password
 * change or any other end of its sessions ends the step too) and the browser it was held for.
 * Only its hash is kept.
 */
const secretOf = (handle: string, binding: string) => `${handle}\n${binding}`;

const expired = () => new AppError('token_invalid', 'this sign-in has expired, was finished already, or was begun in another browser: sign in again');

/**
 * The sign-in page: the password, and for an account with TOTP, the step that asks for the code
 * (its handle, for this browser). `binding`: the browser's own cookie (the pages' device cookie).
 */
export async function passwordStep(
  s: Services,
  actor: Actor,
  input: { email: string; password: string },
  binding: string | null,
): Promise<{ session: NonNullable<SigninResult['session']> } | { step: string }> {
  const result = await passwordSignin(s, actor, input, 'step');
  if (!result.secondFactorStep) return { session: result.session! };
  // Said only after the password proved right, as otp_required is.
  return { step: await holdStep(s, result.account, binding, 'password') };
}

/**
 * Holds a sign-in whose first factor proved right (a password, a mailed code) for this browser
 * while the account's TOTP code is asked: its handle. The handle names the way (its hash covers
 * it), so the session the code opens says how the sign-in began.
 */
export async function holdStep(s: Services, account: AccountRow, binding: string | null, way: 'password' | 'mail'): Promise<string> {
  // Said only after the first factor proved right, as otp_required is.
  if (binding === null)
    throw new AppError('invalid_input', "this browser did not keep the sign-in page's cookie: allow cookies for this site and sign in again");
  const handle = `${randomHandle()}.${account.auth_version}${way === 'mail' ? '.mail' : ''}`;
  await holdToken(s.store.root, account.id, 'signin_step', account.email_key, secretOf(handle, binding), STEP_TTL_MS);
  return handle;
}

/**
 * The code that finishes a held step: checked with TOTP's own limits and audit (a recovery code
 * stands in for it), then the session, through the one routine. A mistyped code keeps the step
 * (its time limit and TOTP's failure limit still hold); the step is spent by the write that
 * finishes it, so of two answers sent at once, one signs in.
 */
export async function finishPasswordStep(
  s: Services,
  actor: Actor,
  handle: string,
  binding: string | null,
  code: Record<string, unknown>,
): Promise<SigninResult> {
  const [, version, mail] = /^[A-Za-z0-9_-]{43}\.(\d{1,15})(\.mail)?$/.exec(handle) ?? [];
  if (version === undefined || binding === null) throw expired();
  const secret = secretOf(handle, binding);
  const spent = await consumeToken(s.store.root, secret, 'signin_step');
  if (!spent.ok) throw expired();
  const account: AccountRow | undefined = await findAccountById(s.store.root, spent.accountId);
  // Held for the account as it was: a new address or an ended set of sessions (a password change) ends it.
  if (!account || account.email_key !== spent.emailKey || String(account.auth_version) !== version) throw expired();
  try {
    return await signInWithSecondFactor(s, actor, account, mail ? MAIL_WAY : PASSWORD_WAY, code);
  } catch (err) {
    // A mistyped code, or one refused while TOTP's failure limit holds: the step stays for the next.
    if (isAppError(err) && (err.code === 'otp_invalid' || err.code === 'otp_required' || err.code === 'rate_limited'))
      await restoreToken(s.store.root, secret, 'signin_step');
    throw err;
  }
}

const randomHandle = () => randomBytes(32).toString('base64url');
