/**
 * The one sign-in routine. Every way in (a password, a passkey, another provider, an LDAP bind;
 * next, SAML reuses the session it opens) supplies only how it proves who someone is; this file
 * owns the rest, in one order, with one wording per refusal:
 *
 *   1. the gate: the limits of this address and of the account the attempt names (an unknown
 *      name counts too, so a lockout says nothing about who exists); a refusal here pays the
 *      way's hashing work first, so it answers in the time a wrong secret does;
 *   2. the way's proof; a failure is counted toward the lockout, audited (`signin_failed` with a
 *      reason from a fixed list), counted in /metrics and in the way's own counter;
 *   3. a disabled account: a failed sign-in, said only after the proof;
 *   4. the second factor, where the account has one: the proof was both factors (a passkey with
 *      user verification, an app password), a code the request carries, or a step of its own;
 *   5. the confirmed address, where --require-verified-email asks it (after the second factor);
 *   6. success: the address's and device's delays lifted, counted, audited (every way alike), and
 *      a session (or none: an LDAP client binds per login, the app keeps its own session).
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import type { SigninMethod } from '../store/sessions';
import { passwordFailure } from './failures';
import { verifySecondFactor } from './second-factor';
import { type Issued, openSession, signinFacts } from './sessions';
import { noticeNewSignin } from './new-signin';

export const UNCONFIRMED_EMAIL = 'confirm your email address first (request_verification sends a new link)';

/** Why a sign-in failed: a fixed list, so nothing an attacker writes reaches the audit or a webhook. */
export const SIGNIN_FAILURES = [
  'unknown_email',
  'unknown_username',
  'unknown_passkey',
  'wrong_password',
  'empty_password',
  'app_password_required',
  'user_handle',
  'passkey_not_verified',
  'passkey_wrong_origin',
  'passkey_wrong_challenge',
  'passkey_bad_signature',
  'passkey_clone_suspected',
  'other_provider',
  'upstream_error',
  'upstream_answer',
  'linked_elsewhere',
  'email_not_trusted',
  'signup_closed',
  'invalid_identity',
  'account_gone',
  'disabled',
  'unverified',
  /** A directory source's person, while that directory cannot be reached (no lockout counts it). */
  'directory_unavailable',
  /** A code mailed to the address, typed wrong (or spent, expired, or past its five tries). */
  'wrong_mail_code',
  /** A proof good once (a mailed code), right, but spent by another request first. */
  'used_already',
  /** GitHub: the person has no verified primary address there. */
  'no_verified_email',
  /** GitHub: the person is not a member of the provider's allowed organisation. */
  'not_in_organization',
] as const;
export type SigninFailure = (typeof SIGNIN_FAILURES)[number];

/** How a way in names itself: the audit's `method` and what else it says (which passkey, which provider). */
export interface Named {
  method: SigninMethod | 'ldap';
  details?: Record<string, string>;
}

export interface WayIn extends Named {
  /**
   * The key the limits count on, when the way knows it before any read (a typed email): the gate
   * then runs before claim(), so a locked-out attempt costs no read of the account.
   */
  limitKey?: string | null;
  /** Who the attempt names, found without hashing: the account (or null) and the key its limits count on. */
  claim(): Promise<{ account: AccountRow | null; limitKey: string | null }>;
  /** Checks the proof: null when it holds for the account, else why not. Pays the same hashing work whatever the account. */
  prove(account: AccountRow | null): Promise<SigninFailure | null>;
  /**
   * A proof good once (a mailed code): spent when the rest of the sign-in holds (after the
   * account's TOTP code, or as its step is asked), by one conditional write; false when another
   * request spent it first.
   */
  spend?(): Promise<boolean>;
  /** Hashing work a refusal at the gate pays too (the ways that hash a secret). */
  equalWork?(): Promise<void>;
  /** The answer to a failed proof, in the way's words. */
  refusal(reason: SigninFailure): AppError;
  /**
   * The account's second factor, when it has one: `proved` (the proof was both factors),
   * `{ check }` (a code the request carries), or `step` (the way asks for it next, with
   * signInWithSecondFactor). Only a way that `proved` it counts its sessions as two-factor
   * without a code.
   */
  secondFactor: 'proved' | { check: Record<string, unknown> } | 'step';
  /** Whether a session opens. */
  session: boolean;
  /** An upstream provider's own `amr` for its sign-in, kept with the session (apps see it after `fed`). */
  upstreamAmr?: readonly string[];
}

/** What the rest of a sign-in needs from its way, once the proof is done. */
export type ProvedWay = Named & Pick<WayIn, 'secondFactor' | 'session' | 'upstreamAmr'> & Partial<Pick<WayIn, 'spend' | 'refusal'>>;

export type SigninResult =
  { account: AccountRow; session: Issued | null; secondFactorStep?: never } | { account: AccountRow; secondFactorStep: true; session?: never };

/** The audit's words for a way: a password sign-in names no method (as it always has). */
const said = (way: Named) => ({ ...(way.method === 'password' ? {} : { method: way.method }), ...way.details });

/** The way's own counter: LDAP binds, and each upstream provider's sign-ins. */
function countWay(s: Services, way: Named, ok: boolean): void {
  if (way.method === 'ldap') {
    const binds = s.counters.ldap.binds;
    const outcome = ok ? 'ok' : 'failed';
    binds[outcome] = (binds[outcome] ?? 0) + 1;
  } else if (way.method === 'provider' && way.details?.provider) {
    // By the counters' own keys: a provider may be named `constructor`, which every object inherits.
    const counts = s.counters.providerSignins;
    const name = way.details.provider;
    const c = Object.hasOwn(counts, name) ? counts[name] : (counts[name] = { ok: 0, refused: 0 });
    c[ok ? 'ok' : 'refused']++;
  }
}

/**
 * A failed sign-in, the one way it is recorded: toward the lockout (per account and address; per
 * address alone when no account is named), audited, counted. `counts` is false for a refusal
 * about the account rather than the secret (disabled, unconfirmed): the secret was right, so the
 * lockout does not move.
 */
export async function signinFailed(
  s: Services,
  actor: Actor,
  way: Named,
  reason: SigninFailure,
  account: AccountRow | null,
  limitKey: string | null,
  counts = true,
): Promise<void> {
  s.counters.signinsFailed++;
  countWay(s, way, false);
  const fields = { ...said(way), reason };
  if (counts) await passwordFailure(s, actor, limitKey, account?.reference_id ?? null, 'signin_failed', fields);
  else await s.audit.record('signin_failed', actor, { account: account?.reference_id ?? null, ...fields });
}

/**
 * A signed-in person proves who they are again by a way's proof (a passkey's assertion, say):
 * the sign-in's gate first, and a failed proof counts toward the same lockout and is audited as a
 * failed sign-in. No session is opened: the caller's own is confirmed (store's reauthenticated).
 */
export async function confirmAgain(
  s: Services,
  actor: Actor,
  account: AccountRow,
  way: Named,
  prove: () => Promise<SigninFailure | null>,
  refusal: (reason: SigninFailure) => AppError,
): Promise<void> {
  await s.limiter.assertSigninAllowed(account.email_key, actor);
  const failure = await prove();
  if (failure === null) return;
  await signinFailed(s, actor, way, failure, account, account.email_key);
  throw refusal(failure);
}

/** Runs a way in through every rule: the signed-in account and its session, or the second factor's step. */
export async function signIn(s: Services, actor: Actor, way: WayIn): Promise<SigninResult> {
  const gate = async (limitKey: string | null) => {
    try {
      await s.limiter.assertSigninAllowed(limitKey, actor);
    } catch (err) {
      // A locked account answers in the time a wrong secret does: the lockout is no oracle.
      if (way.equalWork) await way.equalWork();
      throw err;
    }
  };
  const early = way.limitKey !== undefined;
  if (early) await gate(way.limitKey!);
  const { account, limitKey } = await way.claim();
  if (!early) await gate(limitKey);
  const failure = await way.prove(account);
  if (failure !== null || account === null) {
    const reason = failure ?? 'unknown_email';
    // A directory that is down is no wrong guess: audited, never counted toward a lockout.
    await signinFailed(s, actor, way, reason, account, limitKey, reason !== 'directory_unavailable');
    throw way.refusal(reason);
  }
  return signInProved(s, actor, account, way);
}

/**
 * The rest of a sign-in whose second factor was a step of its own (an upstream provider's
 * sign-in, then the account's TOTP): the provider's proof stands, the code is checked now.
 */
export async function signInWithSecondFactor(
  s: Services,
  actor: Actor,
  account: AccountRow,
  way: Omit<ProvedWay, 'secondFactor'>,
  code: Record<string, unknown>,
) {
  return signInProved(s, actor, account, { ...way, secondFactor: { check: code } });
}

/** Steps 3 to 6, for an account whose proof is done (signIn's, or a way's that just made the account). */
export async function signInProved(s: Services, actor: Actor, account: AccountRow, way: ProvedWay): Promise<SigninResult> {
  if (account.disabled) {
    await signinFailed(s, actor, way, 'disabled', account, account.email_key, false);
    throw new AppError('forbidden', 'this account is disabled', { reason: 'account_disabled' });
  }
  const spend = async () => {
    if (!way.spend || (await way.spend())) return;
    await signinFailed(s, actor, way, 'used_already', account, account.email_key, false);
    throw way.refusal ? way.refusal('used_already') : new AppError('invalid_credentials', 'this was used already');
  };
  let passed: 'proved' | 'otp' | null = way.secondFactor === 'proved' ? 'proved' : null;
  if (account.totp_enabled && way.secondFactor !== 'proved') {
    if (way.secondFactor === 'step') {
      await spend();
      return { account, secondFactorStep: true };
    }
    // A wrong code has its own limits and audit (totp_failed), as on every way. A recovery code
    // stands in for the code.
    await verifySecondFactor({ s, actor, attributes: way.secondFactor.check }, account);
    passed = 'otp';
  }
  if (s.config.requireVerifiedEmail && !account.email_verified) {
    await signinFailed(s, actor, way, 'unverified', account, account.email_key, false);
    throw new AppError('email_unverified', UNCONFIRMED_EMAIL);
  }
  await spend();
  await s.limiter.signinSucceeded(account.email_key, actor);
  // The one opener, from the sign-in's facts (the way, the provider's amr, the second factor);
  // before the success is counted and recorded, so a session that could not be stored (a busy
  // or full store) is never logged as a sign-in.
  const session = way.session
    ? await openSession(s, actor, account, signinFacts({ method: way.method as SigninMethod, upstreamAmr: way.upstreamAmr }, passed))
    : null;
  s.counters.signinsOk++;
  countWay(s, way, true);
  // Every way in leaves the same success record, a directory bind (no session) too.
  await s.audit.record('signin_ok', actor, { account: account.reference_id, ...said(way) });
  // A browser or place new to the account is told by mail (with a link that ends this session).
  if (session) await noticeNewSignin(s, actor, account, session.sessionId);
  return { account, session };
}
