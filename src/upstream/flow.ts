/**
 * Signing in through an upstream provider (contract section 14), and linking without takeover:
 *   - a returning identity (provider, sub) signs in its linked account;
 *   - with --trust-email and email_verified from the provider, an unlinked identity links to the
 *     account with that email; otherwise that person signs in here first and links from /account
 *     (an email alone never hands over an account);
 *   - a new person gets an account only while guest signup is open or with an invitation.
 * Every account rule still applies (disabled, verified email, signin delays, TOTP); the session
 * keeps what the provider's ID token said of its own sign-in (`amr`), which apps see after `fed`. A flow is
 * bound to the browser that began it (a cookie whose hash the flow keeps) and spent at its
 * callback, so a forged, replayed or carried-over state finds nothing.
 */
import { assertRecentSignin, assertSessionRecent } from '../accounts/recent-signin';
import { createHash, randomBytes } from 'node:crypto';
import { AppError, type Reason } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { createAccount } from '../accounts/create';
import { assertSignupOpen } from '../accounts/make';
import { normalizeEmail, sentName } from '../accounts/validate';
import { signIn, signinFailed, signInWithSecondFactor, type SigninFailure } from '../accounts/signin';
import { acceptInvitation, openInvitation } from '../invitations/invitations';
import { type AccountRow, findAccountByEmailKey, findAccountById } from '../store/accounts';
import {
  countLiveFlows,
  findIdentity,
  findProviderById,
  type FlowPurpose,
  type FlowRow,
  insertFlow,
  insertIdentity,
  type ProviderRow,
  spendFlow,
  touchIdentity,
} from '../store/upstream';
import { callbackPath, providerByName } from './providers';
import { authorizationUrl, exchange, type UpstreamIdentity } from './relying-party';
import { keepTeamGroups } from './teams';

const FLOW_TTL_MS = 10 * 60 * 1000;
const TOTP_STEP_TTL_MS = 5 * 60 * 1000;
const MAX_LIVE_FLOWS = 10_000;

const sha = (value: string) => createHash('sha256').update(value).digest('hex');

/** Where a sign-in goes afterwards (the pages check these again), and the invitation it carries. */
export interface Carry {
  returnTo?: string;
  rd?: string;
  /** An invitation's id (never its token). */
  inviteId?: string;
}

/** A TOTP step's flow carries the provider's amr beside where the sign-in goes. */
type StepCarry = Carry & { upstreamAmr?: readonly string[] };

/** A link's flow carries the session that began it: the callback checks its recent sign-in again. */
type LinkCarry = Carry & { session?: string };

export type Finished =
  | { kind: 'signed_in'; session: { token: string; refreshToken: string }; carry: Carry }
  | { kind: 'second_factor'; pending: string; carry: Carry }
  | { kind: 'linked'; carry: Carry };

const expired = () => new AppError('token_invalid', 'this sign-in has expired, was finished already, or was begun in another browser: start again');

/** OAuth's and OpenID Connect's error codes (RFC 6749 4.1.2.1, OIDC Core 3.1.2.6): the only ones the audit repeats. */
const OAUTH_ERRORS = new Set([
  'access_denied',
  'invalid_request',
  'unauthorized_client',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
]);
const oauthError = (raw: string) => (OAUTH_ERRORS.has(raw) ? raw : 'other');

/** Begins a flow: the upstream address to send the browser to. `binding`: the browser's flow cookie. */
export async function beginUpstream(
  s: Services,
  actor: Actor,
  providerName: string,
  o: { purpose: 'signin' | 'link'; binding: string; carry: Carry; inviteToken?: string },
): Promise<string> {
  const provider = await providerByName(s, providerName);
  if (o.purpose === 'link' && actor.principal.accountId === null) throw new AppError('unauthenticated', 'sign in to link another sign-in');
  // Linking adds a lasting way in: a session left in a browser, copied or stolen, is not enough.
  if (o.purpose === 'link') await assertRecentSignin(s, actor);
  if ((await countLiveFlows(s.store.root)) >= MAX_LIVE_FLOWS) {
    throw new AppError('rate_limited', 'too many sign-ins are in progress; try again in a minute', { retryAfter: 60 });
  }
  const carry: LinkCarry = { ...o.carry };
  if (o.inviteToken) carry.inviteId = (await openInvitation(s, { token: o.inviteToken })).reference_id;
  if (o.purpose === 'link' && actor.session !== null) carry.session = actor.session;
  const now = s.clock.now();
  const begun = await authorizationUrl(provider, `${s.config.publicUrl}${callbackPath(provider.name)}`, now);
  await insertFlow(s.store.root, {
    state_hash: sha(begun.state),
    provider_id: provider.id,
    binding: sha(o.binding),
    nonce: begun.nonce,
    code_verifier: begun.verifier,
    purpose: o.purpose,
    account_id: o.purpose === 'link' ? actor.principal.accountId : null,
    carry: JSON.stringify(carry),
    expires_at: now + FLOW_TTL_MS,
  });
  return begun.url;
}

/** A flow of this purpose and browser, spent; anything else is the one "start again" refusal. */
async function spend(s: Services, secret: string | null, binding: string | null, purposes: readonly FlowPurpose[]): Promise<FlowRow> {
  if (!secret || secret.length > 200 || !binding) throw expired();
  const flow = await spendFlow(s.store.root, sha(secret));
  if (!flow || flow.binding !== sha(binding) || !purposes.includes(flow.purpose)) throw expired();
  return flow;
}

/** The callback's refusals a person can act on, by the catalogue's reason of the same name. */
const FORBIDDEN_REASON: Partial<Record<SigninFailure, Reason>> = {
  linked_elsewhere: 'linked_elsewhere',
  email_not_trusted: 'email_not_trusted',
  no_verified_email: 'no_verified_email',
  not_in_organization: 'not_in_organization',
};

/** The callback: checks everything, then links, signs in, or asks for the second factor. */
export async function finishUpstream(s: Services, actor: Actor, providerName: string, callbackUrl: URL, binding: string | null): Promise<Finished> {
  const provider = await providerByName(s, providerName);
  const flow = await spend(s, callbackUrl.searchParams.get('state'), binding, ['signin', 'link']);
  // A refusal before any account is named: counted toward this address's limit, audited, counted.
  const refuse = async (
    reason: SigninFailure,
    message: string,
    code: 'forbidden' | 'signup_closed' | 'invalid_credentials' = 'invalid_credentials',
    error?: string,
  ) => {
    await signinFailed(s, actor, { ...wayOf(provider), ...(error ? { details: { provider: provider.name, error } } : {}) }, reason, null, null);
    return code === 'forbidden' ? new AppError(code, message, { reason: FORBIDDEN_REASON[reason] ?? 'not_permitted' }) : new AppError(code, message);
  };
  if (flow.provider_id !== provider.id) throw await refuse('other_provider', 'this sign-in was begun with another provider: start again');
  const upstreamError = callbackUrl.searchParams.get('error');
  if (upstreamError !== null) {
    const error = oauthError(upstreamError);
    throw await refuse('upstream_error', `${provider.display_name} did not sign you in (${error})`, 'invalid_credentials', error);
  }
  const result = await exchange(
    provider,
    callbackUrl,
    { state: callbackUrl.searchParams.get('state')!, nonce: flow.nonce, verifier: flow.code_verifier },
    s.clock.now(),
  );
  if ('refused' in result) throw await refuse('upstream_answer', `${provider.display_name}'s answer did not check out, so you are not signed in; start again`);
  // The provider's answer was true, and says this person may not come in (GitHub: no verified address, not in the organisation).
  if ('denied' in result) throw await refuse(result.denied.reason, result.denied.message, 'forbidden');
  const identity = result.identity;
  const { session: linkingSession, ...carry } = JSON.parse(flow.carry) as LinkCarry;
  const linked = await findIdentity(s.store.root, provider.id, identity.subject);

  if (flow.purpose === 'link') {
    const accountId = flow.account_id!;
    if (linked && linked.account_id !== accountId) {
      throw await refuse('linked_elsewhere', `this ${provider.display_name} account is linked to another account here`, 'forbidden');
    }
    if (!linked) await linkFromAccountPage(s, actor, provider, accountId, identity, linkingSession ?? null);
    return { kind: 'linked', carry };
  }

  let account: AccountRow | undefined;
  if (linked) {
    account = await findAccountById(s.store.root, linked.account_id);
    await touchIdentity(s.store.root, linked.id);
  } else {
    const key = emailKeyOf(identity.email);
    const existing = key === null ? undefined : await findAccountByEmailKey(s.store.root, key);
    if (existing) {
      // Only a provider the operator trusts with emails, only for an address it verified, and only
      // to an account that proved the address here too: an account made with someone else's
      // address (never confirmed) would otherwise be handed to them with its maker's password
      // still working (account pre-hijacking). Its owner signs in (or resets the password by mail,
      // which proves the address) and links from the account page.
      if (!(provider.trust_email && identity.emailVerified && existing.email_verified)) {
        throw await refuse(
          'email_not_trusted',
          `An account with this email address exists here. Sign in to it first (with its password or passkey), then link ${provider.display_name} from your account page.`,
          'forbidden',
        );
      }
      await link(s, actor, provider, existing.id, identity, 'trusted_email');
      account = existing;
    } else {
      account = await newAccount(s, actor, provider, identity, carry).catch(async (err: unknown) => {
        // An address that looks like an existing account's is answered as one that is taken, naming nobody.
        if (err instanceof AppError && err.code === 'email_taken') {
          throw await refuse(
            'email_not_trusted',
            `An account with this email address exists here. Sign in to it first (with its password or passkey), then link ${provider.display_name} from your account page.`,
            'forbidden',
          );
        }
        if (err instanceof AppError && (err.code === 'signup_closed' || err.code === 'invalid_input')) {
          throw await refuse(
            err.code === 'signup_closed' ? 'signup_closed' : 'invalid_identity',
            err.code === 'signup_closed' ? 'There is no account for you here, and new accounts need an invitation.' : err.message,
            'signup_closed',
          );
        }
        throw err;
      });
    }
  }
  if (!account) throw await refuse('account_gone', 'the account linked to this sign-in no longer exists');
  // GitHub's teams, as they are now, before the session opens: a team left there is a group left here.
  await keepTeamGroups(s, actor, provider, account, identity.teams);
  return signInLinked(s, actor, provider, account, carry, binding!, identity.amr);
}

function emailKeyOf(email: string | null): string | null {
  if (email === null) return null;
  try {
    return normalizeEmail(email).key;
  } catch {
    return null;
  }
}

async function link(s: Services, actor: Actor, provider: ProviderRow, accountId: number, identity: UpstreamIdentity, how: string, tx?: Tx): Promise<void> {
  await insertIdentity(tx ?? s.store.root, { account_id: accountId, provider_id: provider.id, subject: identity.subject, email: identity.email });
  if (!tx) {
    const account = await findAccountById(s.store.root, accountId);
    await s.audit.record('identity_linked', actor, { account: account?.reference_id ?? null, provider: provider.name, how });
  }
}

/**
 * A link the account page began: stored only if the session that began it still signed in
 * recently, read in the transaction that stores it. The check when the link began is not enough:
 * the provider's answer may come up to FLOW_TTL_MS later.
 */
async function linkFromAccountPage(
  s: Services,
  actor: Actor,
  provider: ProviderRow,
  accountId: number,
  identity: UpstreamIdentity,
  sessionId: string | null,
): Promise<void> {
  await s.store.transaction(async (tx) => {
    await assertSessionRecent(s, tx, accountId, sessionId);
    await link(s, actor, provider, accountId, identity, 'account_page', tx);
  });
  const account = await findAccountById(s.store.root, accountId);
  await s.audit.record('identity_linked', actor, { account: account?.reference_id ?? null, provider: provider.name, how: 'account_page' });
}

/** A new person: through their invitation, or guest signup while it is open. Linked in the same transaction. */
async function newAccount(s: Services, actor: Actor, provider: ProviderRow, identity: UpstreamIdentity, carry: Carry): Promise<AccountRow | undefined> {
  // The provider's name for the person, its hidden characters (bidi overrides, zero-width spaces) removed: accounts/validate.ts.
  const name = sentName(identity.name?.slice(0, 100), identity.email?.split('@')[0].slice(0, 100), provider.display_name.slice(0, 100), 'New account');
  const store = (tx: Tx, account: { id: number }) => link(s, actor, provider, account.id, identity, 'new_account', tx);
  let created;
  if (carry.inviteId) {
    created = await acceptInvitation(s, actor, { id: carry.inviteId }, { name, password: null }, store);
  } else {
    await assertSignupOpen(s.store.root, actor.principal);
    if (identity.email === null) throw new AppError('invalid_input', `${provider.display_name} did not share an email address, which an account here needs`);
    await s.limiter.signupAttempt(actor);
    const { email, key } = normalizeEmail(identity.email);
    // The provider's word on the address counts only where the operator trusts it.
    const emailVerified = provider.trust_email && identity.emailVerified;
    created = await createAccount(s, actor, { email, emailKey: key, name, password: null, emailVerified }, store, { way: 'upstream' });
  }
  await s.audit.record('identity_linked', actor, { account: created.referenceId, provider: provider.name, how: 'new_account' });
  return findAccountById(s.store.root, created.id);
}

/** The provider proved who this is: the account's own rules, then a session or its TOTP step. */
async function signInLinked(
  s: Services,
  actor: Actor,
  provider: ProviderRow,
  linked: AccountRow,
  carry: Carry,
  binding: string,
  upstreamAmr: readonly string[],
): Promise<Finished> {
  const signedIn = await signIn(s, actor, {
    ...wayOf(provider),
    upstreamAmr,
    claim: async () => ({ account: linked, limitKey: linked.email_key }),
    prove: async () => null,
    refusal: () => new AppError('invalid_credentials', `${provider.display_name} did not sign you in`),
    // The provider vouched for the first factor; an account with TOTP also asks for its own.
    secondFactor: 'step',
    session: true,
  });
  if (!signedIn.secondFactorStep) return { kind: 'signed_in', session: tokensOf(signedIn.session!), carry };
  const pending = randomBytes(32).toString('base64url');
  await insertFlow(s.store.root, {
    state_hash: sha(pending),
    provider_id: provider.id,
    binding: sha(binding),
    nonce: '-',
    code_verifier: '-',
    purpose: 'totp',
    account_id: linked.id,
    // The provider's amr waits with the step: the session it opens keeps it too.
    carry: JSON.stringify({ ...carry, upstreamAmr } satisfies StepCarry),
    expires_at: s.clock.now() + TOTP_STEP_TTL_MS,
  });
  return { kind: 'second_factor', pending, carry };
}

const wayOf = (provider: ProviderRow) => ({ method: 'provider', details: { provider: provider.name }, session: true }) as const;

const tokensOf = (session: { token: string; refreshToken: string }) => ({ token: session.token, refreshToken: session.refreshToken });

/** The second factor after an upstream sign-in: a TOTP code or a recovery code, with TOTP's own limits. */
export async function finishSecondFactor(
  s: Services,
  actor: Actor,
  pending: string,
  binding: string | null,
  attributes: { otp?: string },
): Promise<{ session: { token: string; refreshToken: string }; carry: Carry }> {
  const flow = await spend(s, pending, binding, ['totp']);
  const account = await findAccountById(s.store.root, flow.account_id!);
  const provider = await findProviderById(s.store.root, flow.provider_id);
  if (!account || !provider) throw expired();
  const { upstreamAmr, ...carry } = JSON.parse(flow.carry) as StepCarry;
  try {
    const { session } = await signInWithSecondFactor(s, actor, account, { ...wayOf(provider), upstreamAmr: upstreamAmr ?? [] }, attributes);
    return { session: tokensOf(session!), carry };
  } catch (err) {
    // A mistyped code keeps the step (its own time limit and TOTP's failure limit still hold).
    if (err instanceof AppError && (err.code === 'otp_invalid' || err.code === 'otp_required')) await insertFlow(s.store.root, flow);
    throw err;
  }
}
