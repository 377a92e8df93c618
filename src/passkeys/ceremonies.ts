/**
 * Passkey ceremonies (contract section 12): options begun by one request, finished by another,
 * on any instance. A challenge is made here, kept in the store with its purpose (and account, or
 * the signup it stands for), and spent by the first response that names it: a replay, an expired
 * challenge or one made for another purpose finds nothing. Every rule of password signin holds:
 * lockout delays, disabled accounts, verified email when required, sessions, audit.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '../errors';
import { type Acting, callerAccount } from '../accounts/acting';
import { confirmAgain, signIn, signInProved, type SigninFailure } from '../accounts/signin';
import { assertRecentSignin, confirmPasswordAgain } from '../accounts/recent-signin';
import { createAccount } from '../accounts/create';
import { assertSignupOpen } from '../accounts/make';
import { normalizeEmail, validateName } from '../accounts/validate';
import { emailKeyTaken, findAccountById, type AccountRow } from '../store/accounts';
import {
  countLiveChallenges,
  findPasskeyByCredential,
  insertChallenge,
  insertPasskey,
  passkeysOf,
  spendChallenge,
  usePasskey,
  type ChallengePurpose,
} from '../store/passkeys';
import {
  authenticationResponse,
  CHALLENGE_TTL_MS,
  challengeOf,
  type CreationOptions,
  library,
  refused,
  registrationResponse,
  relyingParty,
  type RequestOptions,
} from './webauthn';
import { passkeyName, viewPasskey, type PasskeyView } from './views';
import { acceptInvitation, openInvitation } from '../invitations/invitations';
import type { Tx } from '../store/connection';

/** Ceremonies in progress at most (guests can begin them): past this, new ones wait. */
const MAX_LIVE_CHALLENGES = 10_000;

export interface OptionsInput {
  purpose?: ChallengePurpose;
  email?: string;
  name?: string;
  password?: string;
  /** An invitation's token: a passkey signup for its address, while guest signup is closed. */
  invite?: string;
}

async function newChallenge(ctx: Acting): Promise<Uint8Array<ArrayBuffer>> {
  const { s } = ctx;
  if ((await countLiveChallenges(s.store.root)) >= MAX_LIVE_CHALLENGES) {
    throw new AppError('rate_limited', 'too many passkey ceremonies are in progress; try again in a minute', { retryAfter: 60 });
  }
  return new Uint8Array(randomBytes(32));
}

async function keep(ctx: Acting, challenge: string, purpose: ChallengePurpose, accountId: number | null, pending: unknown): Promise<void> {
  await insertChallenge(ctx.s.store.root, {
    challenge,
    purpose,
    account_id: accountId,
    pending: pending === null ? null : JSON.stringify(pending),
    expires_at: ctx.s.clock.now() + CHALLENGE_TTL_MS,
  });
}

/** passkey_options: a guest gets sign-in options (or signup's), a signed-in account registration options. */
export async function beginCeremony(ctx: Acting, input: OptionsInput): Promise<CreationOptions | RequestOptions> {
  const signedIn = ctx.actor.principal.accountId !== null;
  const purpose = input.purpose ?? (signedIn ? 'register' : 'signin');
  const lib = await library();
  const rp = relyingParty(ctx.s.config);
  if (purpose === 'signin') {
    const options = await lib.generateAuthenticationOptions({
      rpID: rp.id,
      challenge: await newChallenge(ctx),
      timeout: CHALLENGE_TTL_MS,
      // A passkey that verified its user (PIN, biometrics) is a complete sign-in on its own.
      userVerification: 'required',
    });
    await keep(ctx, options.challenge, 'signin', null, null);
    return options;
  }
  if (purpose === 'register') {
    if (!signedIn) throw new AppError('unauthenticated', 'sign in to add a passkey');
    const account = await callerAccount(ctx);
    await assertRecent(ctx, account, input.password);
    const existing = await passkeysOf(ctx.s.store.root, account.id);
    const options = await lib.generateRegistrationOptions({
      rpName: 'Gatehouse',
      rpID: rp.id,
      userName: account.email,
      userDisplayName: account.name,
      userID: new TextEncoder().encode(account.reference_id),
      challenge: await newChallenge(ctx),
      timeout: CHALLENGE_TTL_MS,
      attestationType: 'none',
      // The same authenticator twice would be one passkey under two names.
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p.transports) })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    await keep(ctx, options.challenge, 'register', account.id, null);
    return options;
  }
  // signup: a new account whose only way in is this passkey.
  if (signedIn) throw new AppError('invalid_input', 'you are signed in: add a passkey to this account instead');
  if (input.name === undefined) throw new AppError('invalid_input', 'name is required');
  const name = validateName(input.name);
  let email: string;
  let inviteId: string | null = null;
  if (input.invite !== undefined) {
    // The invitation names the address (whatever a form said); it opens signup while guest signup is
    // closed. The ceremony keeps its id, never the link's token (the store holds only its hash).
    const invitation = await openInvitation(ctx.s, { token: input.invite });
    email = invitation.email;
    inviteId = invitation.reference_id;
    await ctx.s.limiter.signupAttempt(ctx.actor);
  } else {
    await assertSignupOpen(ctx.s.store.root, ctx.actor.principal);
    await ctx.s.limiter.signupAttempt(ctx.actor);
    if (input.email === undefined) throw new AppError('invalid_input', 'email is required');
    const normalized = normalizeEmail(input.email);
    if (await emailKeyTaken(ctx.s.store.root, normalized.key)) throw new AppError('email_taken', 'an account with this email already exists');
    email = normalized.email;
  }
  const referenceId = randomUUID();
  const options = await lib.generateRegistrationOptions({
    rpName: 'Gatehouse',
    rpID: rp.id,
    userName: email,
    userDisplayName: name,
    userID: new TextEncoder().encode(referenceId),
    challenge: await newChallenge(ctx),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await keep(ctx, options.challenge, 'signup', null, { email, name, referenceId, inviteId });
  return options;
}

/**
 * Adding a passkey is a new way in: a recent sign-in (accounts/recent-signin.ts), or the password
 * given with the options (checked now, as a password entered again). An API key never adds one.
 * Asked here so that a stale session is sent to confirm it is them before the ceremony; the
 * registration asks again, when it stores the passkey.
 */
async function assertRecent(ctx: Acting, account: AccountRow, password: string | undefined): Promise<void> {
  await assertRecentSignin(ctx.s, ctx.actor, { proving: password !== undefined, adds: 'passkey' });
  if (password !== undefined) await confirmPasswordAgain(ctx, account, password);
}

const transportsOf = (json: string): Array<'usb' | 'nfc' | 'ble' | 'internal' | 'hybrid' | 'cable' | 'smart-card'> => {
  try {
    const list = JSON.parse(json) as unknown;
    return Array.isArray(list) ? (list.filter((t) => typeof t === 'string') as ReturnType<typeof transportsOf>) : [];
  } catch {
    return [];
  }
};

/** A spent challenge of this purpose, or a refusal (replayed, expired, made for something else). */
async function spend(ctx: Acting, challenge: string, purpose: ChallengePurpose) {
  const row = await spendChallenge(ctx.s.store.root, challenge, purpose);
  if (!row) throw new AppError('passkey_invalid', 'this passkey request has expired or was used already; start again');
  return row;
}

export interface Registered {
  passkey: PasskeyView;
  /** A passkey signup: the new account, signed in. */
  created?: { referenceId: string; email: string; usergroupId: string };
  session?: { token: string; refreshToken: string };
}

/** passkey_register: adds the passkey to the caller's account, or finishes a passkey signup. */
export async function finishRegistration(ctx: Acting, rawResponse: unknown, rawName: string | undefined): Promise<Registered> {
  const { s, actor } = ctx;
  const response = registrationResponse(rawResponse);
  const name = passkeyName(rawName);
  const signedIn = actor.principal.accountId !== null;
  const challenge = await spend(ctx, challengeOf(response), signedIn ? 'register' : 'signup');
  if (signedIn && challenge.account_id !== actor.principal.accountId) {
    throw new AppError('passkey_invalid', 'this passkey request was begun by another account; start again');
  }
  const lib = await library();
  const rp = relyingParty(s.config);
  let info;
  try {
    const verified = await lib.verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!verified.verified) throw new Error('not verified');
    info = verified.registrationInfo;
  } catch (err) {
    await s.audit.record('passkey_refused', actor, { account: actor.principal.referenceId, step: 'register', reason: reasonOf(err) });
    throw refused(err);
  }
  const row = {
    credential_id: info.credential.id,
    public_key: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    transports: JSON.stringify(info.credential.transports ?? []),
    name,
    backed_up: info.credentialBackedUp,
  };
  if (signedIn) {
    // The rule holds when the passkey is stored, not only when its options were asked for (up to
    // CHALLENGE_TTL_MS before): the session's sign-in is read again, in the same transaction.
    const added = await s.store.transaction(async (tx) => {
      await assertRecentSignin(s, actor, { tx, adds: 'passkey' });
      return insertPasskey(tx, { ...row, account_id: challenge.account_id! });
    });
    await s.audit.record('passkey_added', actor, { account: actor.principal.referenceId, passkey: added.reference_id });
    return { passkey: viewPasskey(added) };
  }
  const pending = JSON.parse(challenge.pending ?? '{}') as { email: string; name: string; referenceId: string; inviteId?: string | null };
  let added: Awaited<ReturnType<typeof insertPasskey>> | undefined;
  const store = async (tx: Tx, account: { id: number }) => {
    added = await insertPasskey(tx, { ...row, account_id: account.id });
  };
  const { email, key } = normalizeEmail(pending.email);
  const fields = { name: pending.name, password: null, referenceId: pending.referenceId };
  // Through the invitation (its address, its groups, spent in the same transaction), or open signup.
  const created = pending.inviteId
    ? await acceptInvitation(s, actor, { id: pending.inviteId }, fields, store)
    : await createAccount(s, actor, { ...fields, email, emailKey: key }, store);
  await s.audit.record('passkey_added', actor, { account: created.referenceId, passkey: added!.reference_id });
  const account = (await findAccountById(s.store.root, created.id))!;
  // Signed in through the one home: with --require-verified-email, an account made without an
  // invitation waits for its confirmed address, as one made with a password does.
  const { session } = await signInProved(s, actor, account, {
    method: 'passkey',
    details: { passkey: added!.reference_id },
    secondFactor: 'proved',
    session: true,
  });
  return {
    passkey: viewPasskey(added!),
    created: { referenceId: created.referenceId, email: created.email, usergroupId: created.usergroupReferenceId },
    session: { token: session!.token, refreshToken: session!.refreshToken },
  };
}

/** passkey_signin: the account whose passkey signed this challenge, signed in through the one routine (no TOTP step: the passkey verified its user). */
export async function finishSignin(ctx: Acting, rawResponse: unknown): Promise<{ token: string; refreshToken: string }> {
  const { s, actor } = ctx;
  const response = authenticationResponse(rawResponse);
  const challenge = await spend(ctx, challengeOf(response), 'signin');
  const passkey = await findPasskeyByCredential(s.store.root, response.id);
  const refusals: Partial<Record<SigninFailure, AppError>> = {
    unknown_passkey: new AppError('passkey_invalid', 'this passkey is not registered here (it may have been removed)'),
    passkey_clone_suspected: new AppError('passkey_invalid', 'this passkey was refused: its signature counter went backwards, which a copied key would do'),
  };
  const { session } = await signIn(s, actor, {
    method: 'passkey',
    details: passkey ? { passkey: passkey.reference_id } : {},
    async claim() {
      const account = passkey ? ((await findAccountById(s.store.root, passkey.account_id)) ?? null) : null;
      return { account, limitKey: account?.email_key ?? null };
    },
    async prove(account) {
      if (!passkey || !account) return 'unknown_passkey';
      return checkAssertion(ctx, response, challenge.challenge, passkey, account);
    },
    refusal: (reason) => refusals[reason] ?? new AppError('passkey_invalid', 'the passkey did not verify; try again'),
    // A passkey with user verification is both factors.
    secondFactor: 'proved',
    session: true,
  });
  return { token: session!.token, refreshToken: session!.refreshToken };
}

/**
 * reauthenticate with a passkey: an assertion (of a sign-in challenge) by one of the signed-in
 * account's own passkeys, user verified, so it counts as a second factor. The sign-in's gate and
 * failures apply: a refusal counts toward the same lockout and is audited as a failed sign-in.
 */
export async function confirmWithPasskey(ctx: Acting, rawResponse: unknown, account: AccountRow): Promise<void> {
  const { s, actor } = ctx;
  const response = authenticationResponse(rawResponse);
  const passkey = await findPasskeyByCredential(s.store.root, response.id);
  const way = { method: 'passkey' as const, details: passkey ? { passkey: passkey.reference_id } : undefined };
  await confirmAgain(
    s,
    actor,
    account,
    way,
    async () => {
      const challenge = await spend(ctx, challengeOf(response), 'signin');
      return !passkey || passkey.account_id !== account.id ? 'unknown_passkey' : checkAssertion(ctx, response, challenge.challenge, passkey, account);
    },
    (failure) =>
      new AppError(
        'passkey_invalid',
        failure === 'unknown_passkey' ? 'this passkey is not one of this account’s: use one you added to it' : 'the passkey did not verify; try again',
      ),
  );
}

/** One passkey's assertion of a challenge: null when it holds (its counter moved on), else why not. */
async function checkAssertion(
  ctx: Acting,
  response: ReturnType<typeof authenticationResponse>,
  expectedChallenge: string,
  passkey: NonNullable<Awaited<ReturnType<typeof findPasskeyByCredential>>>,
  account: AccountRow,
): Promise<SigninFailure | null> {
  const { s, actor } = ctx;
  // A discoverable credential names its account: it must be the one the credential belongs to.
  const handle = response.response.userHandle;
  if (handle !== undefined && handle !== Buffer.from(account.reference_id).toString('base64url')) return 'user_handle';
  const lib = await library();
  const rp = relyingParty(s.config);
  let next: number;
  try {
    const verified = await lib.verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      // The counter is compared below, where a step backwards is audited as a clone.
      credential: {
        id: passkey.credential_id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: 0,
        transports: transportsOf(passkey.transports),
      },
      requireUserVerification: true,
    });
    if (!verified.verified) return 'passkey_not_verified';
    next = verified.authenticationInfo.newCounter;
  } catch (err) {
    return reasonOf(err);
  }
  // WebAuthn §6.1.1: a counter that does not move forward (when either is non-zero) means two
  // authenticators hold one private key. Refused, and said loudly besides the failed sign-in.
  const backwards = (passkey.counter > 0 || next > 0) && next <= passkey.counter;
  if (backwards || !(await usePasskey(s.store.root, passkey.id, passkey.counter, next))) {
    await s.audit.record(
      'passkey_clone_suspected',
      actor,
      { account: account.reference_id, passkey: passkey.reference_id, stored: passkey.counter, presented: next },
      'warn',
    );
    return 'passkey_clone_suspected';
  }
  return null;
}

/**
 * The library's refusal as one of a few fixed reasons: its messages quote what the client sent
 * (an origin, a type), which is not for the audit or a webhook to repeat.
 */
function reasonOf(err: unknown): 'passkey_wrong_origin' | 'passkey_wrong_challenge' | 'passkey_bad_signature' | 'passkey_not_verified' {
  const message = err instanceof Error ? err.message : '';
  if (/origin|rp ?id/i.test(message)) return 'passkey_wrong_origin';
  if (/challenge/i.test(message)) return 'passkey_wrong_challenge';
  if (/signature/i.test(message)) return 'passkey_bad_signature';
  return 'passkey_not_verified';
}
