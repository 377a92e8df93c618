/**
 * SAML 2.0 Web Browser SSO, identity-provider side. An AuthnRequest from a registered SP is
 * checked (shape, issuer, signature against the SP's registered certificate, freshness, the ACS
 * URL against the registered ones) and kept in the store under a random handle, so any instance
 * can finish it. The person then signs in on the pages like anywhere else (the one sign-in
 * home); with a page session, the gate and the account are checked and the request is answered
 * once: a Response, and the assertion inside it, each signed (response.ts), posted by the browser
 * to the registered ACS URL with RelayState as given.
 *
 * Step-up: an SP registered with two factors, or a request whose RequestedAuthnContext asks only
 * for REFEDS MFA, is answered by the rule of answering an app (accounts/app-answer.ts), as OpenID
 * Connect and forward authentication are: never from a single-factor session. The person is asked
 * for the second factor on Gatehouse's page and comes back to the same sign-in; an account that
 * has no second factor gets a page saying how to add one, and the SP a signed AuthnFailed.
 */
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { passesGate } from '../groups/manage';
import { claimsOf } from '../accounts/claims';
import { ACR_MFA, acrOf, ONE_FACTOR_CONTEXTS } from '../accounts/assurance';
import { answerApp, noSecondFactorWords } from '../accounts/app-answer';
import type { Counted } from '../runtime/limiter';
import { findSession } from '../store/sessions';
import { answerSamlRequest, findSamlRequest, findSamlSp, insertSamlRequest } from '../store/saml';
import { samlKeys } from './keys';
import {
  checkFresh,
  checkSignature,
  issuerSp,
  type BoundMessage,
  type BrowserStep,
  type PostStep,
  readMessage,
  refuse,
  requestId,
  ssoUrl,
  STATUS_AUTHN_FAILED,
} from './messages';
import { BINDING, spOf, type SamlSp } from './providers';
import { failureResponse, successResponse } from './response';
import { attr, children, NS, type XmlElement } from './xml';

/** How long a person has to sign in before the SP's request expires (its ID stays used as long). */
const PENDING_TTL_MS = 15 * 60_000;

/**
 * What the browser does with a sign-in in progress: sign in first; prove the second factor on
 * Gatehouse's page and come back; post the Response (or go on); or, for an account with no second
 * factor where the SP needs one, read why and take the SP its AuthnFailed (`answer`).
 */
export type ContinueResult =
  | { kind: 'signin'; spName: string; again: boolean }
  | { kind: 'second_factor'; spName: string }
  | { kind: 'no_second_factor'; spName: string; answer: PostStep }
  | ({ spName: string } & BrowserStep);

/** The ACS URL to answer at: the one the request names, if registered; else the SP's default. */
function acsFor(sp: SamlSp, root: XmlElement): string {
  const binding = attr(root, 'ProtocolBinding');
  if (binding && binding !== BINDING.post) throw refuse('the request asks for a Response by a binding other than HTTP-POST');
  const url = attr(root, 'AssertionConsumerServiceURL');
  const index = attr(root, 'AssertionConsumerServiceIndex');
  if (url !== null) {
    if (!sp.acs.some((a) => a.location === url))
      throw refuse(`the request's AssertionConsumerServiceURL is not one registered for ${sp.name}; nothing is sent there`);
    return url;
  }
  if (index !== null) {
    const byIndex = sp.acs.find((a) => a.index !== null && String(a.index) === index);
    if (!byIndex) throw refuse(`the request's AssertionConsumerServiceIndex is not one registered for ${sp.name}`);
    return byIndex.location;
  }
  return (sp.acs.find((a) => a.is_default) ?? sp.acs[0]!).location;
}

/**
 * Whether the request's RequestedAuthnContext can be met only by two factors: every class it
 * names is REFEDS MFA, compared `exact` (the default) or `minimum`, or it asks for `better` than a
 * one-factor class. A request that also names a single-factor class (PasswordProtectedTransport,
 * X509, unspecified: the classes Gatehouse's assertions carry, accounts/assurance.ts's one list)
 * is met by it, as SAML's comparison says. One that can never be met (classes Gatehouse
 * never asserts, compared `exact` or `minimum`; `better` than REFEDS MFA) is refused: the app is
 * never answered with less than it asked for.
 */
function contextAsksForMfa(root: XmlElement): boolean {
  const requested = children(root, 'RequestedAuthnContext', NS.protocol);
  if (requested.length !== 1) return false;
  const comparison = attr(requested[0]!, 'Comparison') ?? 'exact';
  const classes = children(requested[0]!, 'AuthnContextClassRef', NS.assertion).map((e) => (e.textContent ?? '').trim());
  if (classes.length === 0 || comparison === 'maximum') return false;
  const known = classes.filter((c) => c === ACR_MFA || ONE_FACTOR_CONTEXTS.has(c));
  const never = () =>
    refuse(
      `the application asks for a sign-in Gatehouse never makes (${comparison} ${classes.join(' ').slice(0, 200)}); ask its administrator to request ${ACR_MFA} or PasswordProtectedTransport`,
    );
  if (comparison === 'better') {
    if (classes.includes(ACR_MFA) || known.length === 0) throw never();
    return true;
  }
  if (comparison !== 'exact' && comparison !== 'minimum') throw refuse("the request's RequestedAuthnContext has an unknown Comparison");
  if (known.length === 0) throw never();
  return known.every((c) => c === ACR_MFA);
}

/**
 * A pending sign-in's handle: 32 base64url characters. Whether its request asked for two factors
 * is part of the handle itself, the row's key (a mark after those 32): the browser cannot drop it
 * from the URL without the row no longer being found, and no column is needed beside the SP's own
 * two_factor. Only characters the pages take in a return path ([A-Za-z0-9_-]).
 */
const HANDLE_LENGTH = 32;
const MFA_MARK = '-mfa';
const newHandle = (mfa: boolean) => randomBytes((HANDLE_LENGTH * 3) / 4).toString('base64url') + (mfa ? MFA_MARK : '');
const handleAsksForMfa = (handle: string) => handle.length === HANDLE_LENGTH + MFA_MARK.length && handle.endsWith(MFA_MARK);

/** An AuthnRequest arrives: checked and kept; the handle the browser continues with. */
export async function startSignin(s: Services, m: BoundMessage, who: Counted): Promise<{ handle: string; spName: string }> {
  // Counted before anything is read: each accepted request keeps a row until it expires.
  await s.limiter.samlRequest(who);
  const { xml, root } = await readMessage(m, [[NS.protocol, 'AuthnRequest']]);
  const sp = await issuerSp(s, root);
  checkSignature(sp, m, xml, root, sp.authnRequestsSigned);
  checkFresh(s, root);
  const destination = attr(root, 'Destination');
  if (destination !== null && destination !== ssoUrl(s))
    throw refuse(`the request is addressed to ${destination.slice(0, 200)}, not to this server's ${ssoUrl(s)}`);
  const id = requestId(root);
  const acs = acsFor(sp, root);
  const handle = newHandle(contextAsksForMfa(root));
  const kept = await insertSamlRequest(s.store.root, {
    handle,
    sp_id: sp.id,
    request_id: id,
    acs_url: acs,
    relay_state: m.relayState ?? null,
    force_authn: root.getAttribute('ForceAuthn') === 'true',
    expires_at: s.clock.now() + PENDING_TTL_MS,
  });
  if (!kept) throw refuse('this request was used already (a replay); start again from the application');
  return { handle, spName: sp.name };
}

/** An IdP-initiated sign-in, started from Gatehouse's own page: a pending sign-in without a request. */
export async function startUnsolicited(s: Services, spId: string, who: Counted): Promise<{ handle: string }> {
  // Counted with the SP's requests: each keeps a row until it expires, whoever starts it.
  await s.limiter.samlRequest(who);
  const row = await findSamlSp(s.store.root, { id: spId });
  if (!row) throw new AppError('not_found', 'no such SAML service provider');
  const sp = spOf(row);
  const handle = newHandle(false);
  await insertSamlRequest(s.store.root, {
    handle,
    sp_id: sp.id,
    request_id: `unsolicited:${handle}`,
    acs_url: (sp.acs.find((a) => a.is_default) ?? sp.acs[0]!).location,
    relay_state: null,
    force_authn: false,
    expires_at: s.clock.now() + PENDING_TTL_MS,
  });
  return { handle };
}

/**
 * The browser comes back with a handle: without a (fresh enough) page session, the person signs
 * in first; with one, the gate decides, then the rule of answering an app, and the request is
 * answered once.
 */
export async function continueSignin(s: Services, actor: Actor, handle: string): Promise<ContinueResult> {
  const pending = await findSamlRequest(s.store.root, handle);
  if (!pending) throw refuse('this sign-in has expired or was finished already; start again from the application');
  const row = await findSamlSp(s.store.root, { id: pending.sp_id });
  if (!row) throw new AppError('not_found', 'the application of this sign-in is no longer registered');
  const sp = spOf(row);
  const found = actor.session === null || actor.principal.referenceId === null ? undefined : await findSession(s.store.root, actor.session);
  // A recovery link's session is for adding a way in on /account, never a sign-in to an app.
  const session = found?.method === 'recovery' ? undefined : found;
  if (!session || session.ended_at !== null || (pending.force_authn && session.authenticated_at < pending.created_at)) {
    return { kind: 'signin', spName: sp.name, again: session !== undefined && session.ended_at === null };
  }
  const sub = actor.principal.referenceId!;
  const claims = await claimsOf(s, sub);
  if (!claims) {
    s.counters.saml.refused = (s.counters.saml.refused ?? 0) + 1;
    throw new AppError('forbidden', 'this account is disabled', { reason: 'account_disabled' });
  }
  if (!(await passesGate(s.store.root, sub, sp.allowedGroups))) {
    s.counters.saml.refused = (s.counters.saml.refused ?? 0) + 1;
    await s.audit.record('saml_signin', actor, { account: sub, sp: sp.id, outcome: 'not_allowed' }, 'warn');
    throw new AppError('forbidden', `this account may not sign in to ${sp.name}: it is open to members of certain groups only`, {
      reason: 'not_in_allowed_groups',
    });
  }
  // Asked on every visit of the handle, until the session stands on two factors: going back to
  // it, or opening it again, never skips the step.
  const answer = await answerApp(s, { acr: acrOf(session), account: session.account_id }, { twoFactor: sp.twoFactor, asked: handleAsksForMfa(handle) });
  if (answer === 'second_factor') return { kind: 'second_factor', spName: sp.name };
  // Answered once, whatever the answer: the handle is spent by this write.
  if (!(await answerSamlRequest(s.store.root, handle))) throw refuse('this sign-in was finished already; start again from the application');
  const [key] = await samlKeys(s);
  if (answer === 'no_second_factor') {
    // Never answered at the lower level: the SP is told the sign-in failed.
    s.counters.saml.refused = (s.counters.saml.refused ?? 0) + 1;
    await s.audit.record('saml_signin', actor, { account: sub, sp: sp.id, outcome: 'no_second_factor' }, 'warn');
    return { kind: 'no_second_factor', spName: sp.name, answer: failureResponse(s, key!, pending, STATUS_AUTHN_FAILED, noSecondFactorWords(sp.name)) };
  }
  const response = await successResponse(s, key!, sp, pending, session, sub, claims);
  s.counters.saml.ok = (s.counters.saml.ok ?? 0) + 1;
  await s.audit.record('saml_signin', actor, { account: sub, sp: sp.id, outcome: 'ok' });
  return { ...response, spName: sp.name };
}
