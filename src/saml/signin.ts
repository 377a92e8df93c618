/**
 * SAML 2.0 Web Browser SSO, identity-provider side. An AuthnRequest from a registered SP is
 * checked (shape, issuer, signature against the SP's registered certificate, freshness, the ACS
 * URL against the registered ones) and kept in the store under a random handle, so any instance
 * can finish it. The person then signs in on the pages like anywhere else (the one sign-in
 * home); with a page session, the gate and the account are checked and the request is answered
 * once: a Response, and the assertion inside it, each signed (RSA-SHA256, exclusive c14n), posted
 * by the browser to the registered ACS URL with RelayState as given.
 *
 * Step-up: an SP registered with two factors, or a request whose RequestedAuthnContext asks only
 * for REFEDS MFA, is never answered from a single-factor session. The person is asked for the
 * second factor on Gatehouse's page and comes back to the same sign-in; an account that has no
 * second factor gets a page saying how to add one, and the SP a signed AuthnFailed.
 *
 * Single logout: a LogoutRequest from a registered SP ends the browser's Gatehouse session only
 * when it names a sign-in this very session made at that SP (the NameID and SessionIndex its
 * Response said), is addressed to /saml/slo and was not answered before; it is answered with a
 * signed LogoutResponse, a failure status when the session is kept.
 */
import { createHmac, createSign, createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { passesGate } from '../groups/manage';
import { claimsOf } from '../accounts/claims';
import { ACR_MFA, acrOf, authnContextOf, fallsShort } from '../accounts/assurance';
import type { Counted } from '../runtime/limiter';
import { findSession } from '../store/sessions';
import { findAccountById } from '../store/accounts';
import { hasSecondFactor } from '../accounts/ways-in';
import {
  answerSamlRequest,
  findSamlRequest,
  findSamlSp,
  hasSamlSignin,
  insertSamlRequest,
  recordSamlSignin,
  samlPseudonymKey,
  type SamlRequestRow,
  useSamlLogoutId,
} from '../store/saml';
import { samlLib } from './libraries';
import { samlKeys, type SamlKey } from './keys';
import { BINDING, NAMEID_FORMATS, spOf, type SamlSp } from './providers';
import { attr, childText, children, decodeMessage, inflateMessage, NS, parseChecked, shapeValidator, type XmlElement } from './xml';

const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
/** How long an assertion may be presented, and how old a request may be when it arrives. */
const ASSERTION_TTL_MS = 5 * 60_000;
/** Clocks differ: a request a little in the future (or this much past its age) still counts. */
const SKEW_MS = 3 * 60_000;
/** How long a person has to sign in before the SP's request expires (its ID stays used as long). */
const PENDING_TTL_MS = 15 * 60_000;
/** SAML bindings limit RelayState to 80 bytes. */
const MAX_RELAY_STATE = 80;

export type Binding = 'redirect' | 'post';

/** A message as an HTTP binding carries it: the fields, and for HTTP-Redirect the signed part of the query. */
export interface BoundMessage {
  binding: Binding;
  message: string;
  relayState?: string;
  sigAlg?: string;
  signature?: string;
  /** HTTP-Redirect: `SAMLRequest=…&RelayState=…&SigAlg=…` exactly as the query carried them. */
  signedQuery?: string;
}

/** What the browser does next: post a form (to the SP), or go to a URL. */
export type BrowserStep = { kind: 'post'; url: string; fields: Record<string, string> } | { kind: 'redirect'; url: string };

/**
 * What the browser does with a sign-in in progress: sign in first; prove the second factor on
 * `url` and come back; post the Response (or go on); or, for an account with no second factor
 * where the SP needs one, read why and take the SP its AuthnFailed (`answer`).
 */
export type ContinueResult =
  | { kind: 'signin'; spName: string; again: boolean }
  | { kind: 'second_factor'; spName: string; url: string }
  | { kind: 'no_second_factor'; spName: string; answer: Extract<BrowserStep, { kind: 'post' }> }
  | ({ spName: string } & BrowserStep);

const refuse = (why: string) => new AppError('invalid_input', why);
const newId = () => `_${randomBytes(20).toString('hex')}`;
const xmlText = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const instant = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const idpEntityId = (s: Services) => `${s.config.publicUrl}/saml/metadata`;
const ssoUrl = (s: Services) => `${s.config.publicUrl}/saml/sso`;
const sloUrl = (s: Services) => `${s.config.publicUrl}/saml/slo`;

const pem = (b64: string) => `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;

/** The IdP's metadata: entity id, SSO (Redirect, POST), SLO, and every signing certificate (current, then next). */
export async function idpMetadata(s: Services): Promise<string> {
  const keys = await samlKeys(s);
  const keyDescriptors = keys
    .map(
      (k) =>
        `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${k.certificateBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`,
    )
    .join('\n    ');
  const formats = Object.values(NAMEID_FORMATS)
    .map((f) => `<md:NameIDFormat>${f}</md:NameIDFormat>`)
    .join('\n    ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="${NS.metadata}" xmlns:ds="${NS.dsig}" entityID="${xmlText(idpEntityId(s))}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="${NS.protocol}">
    ${keyDescriptors}
    <md:SingleLogoutService Binding="${BINDING.redirect}" Location="${xmlText(sloUrl(s))}"/>
    <md:SingleLogoutService Binding="${BINDING.post}" Location="${xmlText(sloUrl(s))}"/>
    ${formats}
    <md:SingleSignOnService Binding="${BINDING.redirect}" Location="${xmlText(ssoUrl(s))}"/>
    <md:SingleSignOnService Binding="${BINDING.post}" Location="${xmlText(ssoUrl(s))}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>
`;
}

/** The message's XML, decoded as its binding carries it, and checked for shape. */
async function readMessage(m: BoundMessage, roots: ReadonlyArray<readonly [string, string]>): Promise<{ xml: string; root: XmlElement }> {
  if (m.relayState !== undefined && Buffer.byteLength(m.relayState, 'utf8') > MAX_RELAY_STATE) {
    throw refuse(`the RelayState is longer than ${MAX_RELAY_STATE} bytes, the most SAML allows`);
  }
  if (m.message === '') throw refuse('this address takes a SAML message from an app (a SAMLRequest); open the app and sign in from there');
  const xml = m.binding === 'redirect' ? inflateMessage(m.message) : decodeMessage(m.message);
  return { xml, root: await parseChecked(xml, roots) };
}

/** The registered SP that issued the message (its Issuer), or a refusal naming the unknown one. */
async function issuerSp(s: Services, root: XmlElement): Promise<SamlSp> {
  const issuer = childText(root, 'Issuer', NS.assertion);
  if (!issuer) throw refuse('the SAML message names no Issuer');
  const row = await findSamlSp(s.store.root, { entity_id: issuer });
  if (!row) throw new AppError('not_found', `no service provider ${issuer.slice(0, 200)} is registered here; an administrator adds it with saml sp add`);
  return spOf(row);
}

/**
 * The message's signature, checked with the SP's registered certificate only (never one the
 * message carries). Required when the SP's metadata says it signs; checked whenever present.
 */
function checkSignature(sp: SamlSp, m: BoundMessage, xml: string, root: XmlElement, required: boolean): void {
  const enveloped = children(root, 'Signature', NS.dsig).length > 0;
  const signed = m.binding === 'redirect' ? m.signature !== undefined : enveloped;
  if (!signed) {
    if (required) throw refuse(`${sp.name} signs its requests (its metadata says so), and this one is not signed`);
    return;
  }
  if (sp.certificate === null) throw refuse(`the request is signed, but ${sp.name} has no registered certificate to check it with`);
  let ok: boolean;
  if (m.binding === 'redirect') {
    if (m.sigAlg !== RSA_SHA256) throw refuse('the request is signed with an algorithm other than RSA-SHA256');
    if (m.signedQuery === undefined) throw refuse('the signed request lost its query');
    ok = createVerify('RSA-SHA256')
      .update(m.signedQuery)
      .verify(new X509Certificate(pem(sp.certificate)).publicKey, Buffer.from(m.signature!, 'base64'));
  } else {
    try {
      [ok] = samlLib(shapeValidator.validate).verifySignature(xml, {
        metadata: { getX509Certificate: () => [sp.certificate!] },
        signatureAlgorithm: RSA_SHA256,
      });
    } catch {
      ok = false;
    }
  }
  if (!ok) throw refuse(`the request's signature does not verify with ${sp.name}'s registered certificate`);
}

/** The message's IssueInstant is recent: an old request (or one from the far future) is refused. */
function checkFresh(s: Services, root: XmlElement): void {
  if (root.getAttribute('Version') !== '2.0') throw refuse('the request is not SAML 2.0 (Version="2.0")');
  const at = Date.parse(root.getAttribute('IssueInstant') ?? '');
  const now = s.clock.now();
  if (!Number.isFinite(at)) throw refuse('the request has no valid IssueInstant');
  if (at > now + SKEW_MS || at < now - ASSERTION_TTL_MS - SKEW_MS)
    throw refuse('the request is too old (or dated in the future); start again from the application');
}

function requestId(root: XmlElement): string {
  const id = root.getAttribute('ID') ?? '';
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(id)) throw refuse('the request has no valid ID');
  return id;
}

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

/** The AuthnContextClassRefs Gatehouse's assertions carry (accounts/assurance.ts): one factor's, and REFEDS MFA. */
const ONE_FACTOR_CLASSES = new Set(['urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport', 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified']);

/**
 * Whether the request's RequestedAuthnContext can be met only by two factors: every class it
 * names is REFEDS MFA, compared `exact` (the default) or `minimum`, or it asks for `better` than a
 * one-factor class. A request that also names a single-factor class (PasswordProtectedTransport,
 * say) is met by it, as SAML's comparison says. One that can never be met (classes Gatehouse
 * never asserts, compared `exact` or `minimum`; `better` than REFEDS MFA) is refused: the app is
 * never answered with less than it asked for.
 */
function asksForMfa(root: XmlElement): boolean {
  const requested = children(root, 'RequestedAuthnContext', NS.protocol);
  if (requested.length !== 1) return false;
  const comparison = attr(requested[0]!, 'Comparison') ?? 'exact';
  const classes = children(requested[0]!, 'AuthnContextClassRef', NS.assertion).map((e) => (e.textContent ?? '').trim());
  if (classes.length === 0 || comparison === 'maximum') return false;
  const known = classes.filter((c) => c === ACR_MFA || ONE_FACTOR_CLASSES.has(c));
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
  const handle = newHandle(asksForMfa(root));
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

const hmac = (key: string, ...parts: string[]) => createHmac('sha256', key).update(parts.join('\0')).digest('base64url');

/** The attributes every Response carries: FriendlyName for people, the usual URIs as Name. */
const ATTRIBUTES = [
  ['email', 'urn:oid:0.9.2342.19200300.100.1.3'],
  ['name', 'urn:oid:2.16.840.1.113730.3.1.241'],
  ['username', 'urn:oid:0.9.2342.19200300.100.1.1'],
  ['groups', 'urn:oid:1.3.6.1.4.1.5923.1.5.1.1'],
] as const;

function signResponse(key: SamlKey, xml: string): string {
  const lib = samlLib(shapeValidator.validate);
  const common = { privateKey: key.privateKey, signingCert: key.certificateBase64, signatureAlgorithm: RSA_SHA256, isBase64Output: false };
  const withAssertion = lib.constructSAMLSignature({
    ...common,
    rawSamlMessage: xml,
    referenceTagXPath: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']",
    signatureConfig: {
      prefix: 'ds',
      location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Assertion']/*[local-name(.)='Issuer']", action: 'after' },
    },
  });
  return lib.constructSAMLSignature({
    ...common,
    rawSamlMessage: withAssertion,
    isMessageSigned: true,
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
  });
}

/**
 * The browser comes back with a handle: without a (fresh enough) page session, the person signs
 * in first; with one, the gate decides, and the request is answered once.
 */
export async function continueSignin(s: Services, actor: Actor, handle: string): Promise<ContinueResult> {
  const pending = await findSamlRequest(s.store.root, handle);
  if (!pending) throw refuse('this sign-in has expired or was finished already; start again from the application');
  const row = await findSamlSp(s.store.root, { id: pending.sp_id });
  if (!row) throw new AppError('not_found', 'the application of this sign-in is no longer registered');
  const sp = spOf(row);
  const session = actor.session === null || actor.principal.referenceId === null ? undefined : await findSession(s.store.root, actor.session);
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
  if (fallsShort(acrOf(session), sp.twoFactor || handleAsksForMfa(handle))) {
    if (await accountHasSecondFactor(s, session.account_id)) {
      const back = `/saml/continue/${handle}`;
      return { kind: 'second_factor', spName: sp.name, url: `/signin/confirm?return=${encodeURIComponent(back)}&need=second-factor` };
    }
    // Never answered at the lower level: the SP is told the sign-in failed, once.
    if (!(await answerSamlRequest(s.store.root, handle))) throw refuse('this sign-in was finished already; start again from the application');
    s.counters.saml.refused = (s.counters.saml.refused ?? 0) + 1;
    await s.audit.record('saml_signin', actor, { account: sub, sp: sp.id, outcome: 'no_second_factor' }, 'warn');
    const [key] = await samlKeys(s);
    const answer = failureResponse(s, key!, pending, STATUS_AUTHN_FAILED, `${sp.name} needs a second factor, and this account has none`);
    return { kind: 'no_second_factor', spName: sp.name, answer };
  }
  if (!(await answerSamlRequest(s.store.root, handle))) throw refuse('this sign-in was finished already; start again from the application');

  const [key] = await samlKeys(s);
  const pseudonymKey = await samlPseudonymKey(s.store.root);
  const nameId = sp.nameid === 'email' ? claims.email : sp.nameid === 'username' ? claims.preferred_username : hmac(pseudonymKey, 'nameid', sp.entityId, sub);
  const sessionIndex = `_${hmac(pseudonymKey, 'session', session.id)}`;
  // What a LogoutRequest from this SP must name to end this session (see logout).
  await recordSamlSignin(s.store.root, { session_id: session.id, sp_id: sp.id, name_id: nameId, session_index: sessionIndex });
  const now = s.clock.now();
  const until = instant(now + ASSERTION_TTL_MS);
  const inResponseTo = pending.request_id.startsWith('unsolicited:') ? null : pending.request_id;
  const irt = inResponseTo === null ? '' : ` InResponseTo="${xmlText(inResponseTo)}"`;
  const issuer = `<saml:Issuer>${xmlText(idpEntityId(s))}</saml:Issuer>`;
  const values = (friendly: string): string[] =>
    friendly === 'groups' ? claims.groups : [friendly === 'email' ? claims.email : friendly === 'name' ? claims.name : claims.preferred_username];
  const attributes = ATTRIBUTES.map(
    ([friendly, uri]) =>
      `<saml:Attribute Name="${uri}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri" FriendlyName="${friendly}">${values(friendly)
        .map((v) => `<saml:AttributeValue xsi:type="xs:string">${xmlText(v)}</saml:AttributeValue>`)
        .join('')}</saml:Attribute>`,
  ).join('');
  const xml =
    `<samlp:Response xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${instant(now)}" Destination="${xmlText(pending.acs_url)}"${irt}>` +
    issuer +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ID="${newId()}" Version="2.0" IssueInstant="${instant(now)}">` +
    issuer +
    `<saml:Subject><saml:NameID Format="${NAMEID_FORMATS[sp.nameid]}" SPNameQualifier="${xmlText(sp.entityId)}">${xmlText(nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer"><saml:SubjectConfirmationData NotOnOrAfter="${until}" Recipient="${xmlText(pending.acs_url)}"${irt}/></saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${instant(now)}" NotOnOrAfter="${until}"><saml:AudienceRestriction><saml:Audience>${xmlText(sp.entityId)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${instant(session.authenticated_at)}" SessionIndex="${sessionIndex}"><saml:AuthnContext><saml:AuthnContextClassRef>${authnContextOf(session)}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` +
    `</saml:Assertion></samlp:Response>`;
  const signed = signResponse(key!, xml);
  s.counters.saml.ok = (s.counters.saml.ok ?? 0) + 1;
  await s.audit.record('saml_signin', actor, { account: sub, sp: sp.id, outcome: 'ok' });
  const fields: Record<string, string> = { SAMLResponse: Buffer.from(signed, 'utf8').toString('base64') };
  if (pending.relay_state !== null) fields.RelayState = pending.relay_state;
  return { kind: 'post', url: pending.acs_url, fields, spName: sp.name };
}

/** Whether the account can prove a second factor here (accounts/ways-in.ts). */
async function accountHasSecondFactor(s: Services, accountId: number): Promise<boolean> {
  const account = await findAccountById(s.store.root, accountId);
  return account !== undefined && (await hasSecondFactor(s.store.root, account));
}

/** A Response that signs no one in (Responder, with a second-level status and why), signed as every Response is. */
function failureResponse(s: Services, key: SamlKey, pending: SamlRequestRow, second: string, why: string): Extract<BrowserStep, { kind: 'post' }> {
  const irt = pending.request_id.startsWith('unsolicited:') ? '' : ` InResponseTo="${xmlText(pending.request_id)}"`;
  const xml =
    `<samlp:Response xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${instant(s.clock.now())}" Destination="${xmlText(pending.acs_url)}"${irt}>` +
    `<saml:Issuer>${xmlText(idpEntityId(s))}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${STATUS_RESPONDER}"><samlp:StatusCode Value="${second}"/></samlp:StatusCode><samlp:StatusMessage>${xmlText(why)}</samlp:StatusMessage></samlp:Status>` +
    `</samlp:Response>`;
  const signed = samlLib(shapeValidator.validate).constructSAMLSignature({
    rawSamlMessage: xml,
    isMessageSigned: true,
    privateKey: key.privateKey,
    signingCert: key.certificateBase64,
    signatureAlgorithm: RSA_SHA256,
    isBase64Output: false,
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='Response']/*[local-name(.)='Issuer']", action: 'after' } },
  });
  const fields: Record<string, string> = { SAMLResponse: Buffer.from(signed, 'utf8').toString('base64') };
  if (pending.relay_state !== null) fields.RelayState = pending.relay_state;
  return { kind: 'post', url: pending.acs_url, fields };
}

/** The query of an HTTP-Redirect LogoutResponse, signed with the IdP's key (SAML bindings 3.4.4.1). */
function signedRedirect(key: SamlKey, url: string, xml: string, relayState: string | undefined): string {
  const enc = encodeURIComponent;
  let query = `SAMLResponse=${enc(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`;
  if (relayState !== undefined) query += `&RelayState=${enc(relayState)}`;
  query += `&SigAlg=${enc(RSA_SHA256)}`;
  const signature = createSign('RSA-SHA256').update(query).sign(key.privateKey, 'base64');
  return `${url}${url.includes('?') ? '&' : '?'}${query}&Signature=${enc(signature)}`;
}

const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const STATUS_REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';
const STATUS_RESPONDER = 'urn:oasis:names:tc:SAML:2.0:status:Responder';
/** The identity provider could not authenticate the principal (SAML core 3.2.2.2). */
const STATUS_AUTHN_FAILED = 'urn:oasis:names:tc:SAML:2.0:status:AuthnFailed';
/** Second-level statuses (SAML core 3.2.2.2): a request refused as such, and a principal not known to this session. */
const STATUS_DENIED = 'urn:oasis:names:tc:SAML:2.0:status:RequestDenied';
const STATUS_UNKNOWN = 'urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal';

/** How long a LogoutRequest's ID is kept: as long as checkFresh would still accept a request dated up to SKEW_MS ahead. */
const LOGOUT_ID_TTL_MS = ASSERTION_TTL_MS + 2 * SKEW_MS;

type LogoutRefusal = { status: string; why: string };

/**
 * Why this LogoutRequest must not end the browser's session, or null when it may. Anyone can make
 * a browser send one (a link, an image), so it must name what only the SP it claims to be from
 * knows: a sign-in this session made there, by NameID and SessionIndex.
 */
async function logoutRefusal(s: Services, actor: Actor, sp: SamlSp, root: XmlElement, id: string): Promise<LogoutRefusal | null> {
  try {
    checkFresh(s, root);
  } catch (err) {
    if (err instanceof AppError) return { status: STATUS_DENIED, why: err.message };
    throw err;
  }
  if (attr(root, 'Destination') !== sloUrl(s)) return { status: STATUS_DENIED, why: `the request is not addressed to ${sloUrl(s)} (Destination)` };
  const nameId = childText(root, 'NameID', NS.assertion);
  const indexes = children(root, 'SessionIndex', NS.protocol).map((e) => (e.textContent ?? '').trim());
  // A session has one SessionIndex: a request naming none (every session) or several (the same one
  // twice too) is not this one's.
  const [index] = indexes;
  if (nameId === null || indexes.length !== 1 || actor.session === null) {
    return { status: STATUS_UNKNOWN, why: 'the request does not name a sign-in of this browser (NameID and one SessionIndex)' };
  }
  if (!(await hasSamlSignin(s.store.root, { session_id: actor.session, sp_id: sp.id, name_id: nameId, session_index: index! }))) {
    return { status: STATUS_UNKNOWN, why: `this browser's session did not sign in to ${sp.name} as the request says` };
  }
  // Decided by the insert, never by a read before it: of the same request sent twice at once, one ends the session.
  if (!(await useSamlLogoutId(s.store.root, { sp_id: sp.id, request_id: id, expires_at: s.clock.now() + LOGOUT_ID_TTL_MS }))) {
    return { status: STATUS_DENIED, why: 'this logout request was answered already (a replay)' };
  }
  return null;
}

export type LogoutResult = { spName: string; signedOut: boolean } & BrowserStep;

/**
 * A LogoutRequest from a registered SP. When it names a sign-in this session made at that SP, the
 * session ends (`endSession`) and the SP gets a signed LogoutResponse saying Success at its
 * registered logout URL; otherwise the session is kept and the LogoutResponse says Requester. A
 * request that cannot be answered (unknown SP, bad signature, no logout URL) is refused as a page.
 */
export async function logout(s: Services, actor: Actor, m: BoundMessage, endSession: () => Promise<void>): Promise<LogoutResult> {
  const { xml, root } = await readMessage(m, [[NS.protocol, 'LogoutRequest']]);
  const sp = await issuerSp(s, root);
  checkSignature(sp, m, xml, root, sp.authnRequestsSigned);
  const id = requestId(root);
  const endpoint = sp.slo.find((e) => e.binding === BINDING.redirect) ?? sp.slo.find((e) => e.binding === BINDING.post);
  if (!endpoint) throw refuse(`${sp.name} has no single logout URL registered (its metadata lists no SingleLogoutService)`);
  const refusal = await logoutRefusal(s, actor, sp, root, id);
  if (refusal === null) {
    await endSession();
    await s.audit.record('saml_signout', actor, { account: actor.principal.referenceId, sp: sp.id });
  } else {
    s.logger.info('saml_logout_refused', { sp: sp.id, reason: refusal.why });
  }
  const url = endpoint.response_location ?? endpoint.location;
  const [key] = await samlKeys(s);
  const status =
    refusal === null
      ? `<samlp:StatusCode Value="${STATUS_SUCCESS}"/>`
      : `<samlp:StatusCode Value="${STATUS_REQUESTER}"><samlp:StatusCode Value="${refusal.status}"/></samlp:StatusCode><samlp:StatusMessage>${xmlText(refusal.why)}</samlp:StatusMessage>`;
  const xmlOut =
    `<samlp:LogoutResponse xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${instant(s.clock.now())}" Destination="${xmlText(url)}" InResponseTo="${xmlText(id)}">` +
    `<saml:Issuer>${xmlText(idpEntityId(s))}</saml:Issuer><samlp:Status>${status}</samlp:Status></samlp:LogoutResponse>`;
  const signedOut = refusal === null;
  if (endpoint.binding === BINDING.redirect) return { kind: 'redirect', url: signedRedirect(key!, url, xmlOut, m.relayState), spName: sp.name, signedOut };
  const signed = samlLib(shapeValidator.validate).constructSAMLSignature({
    rawSamlMessage: xmlOut,
    isMessageSigned: true,
    privateKey: key!.privateKey,
    signingCert: key!.certificateBase64,
    signatureAlgorithm: RSA_SHA256,
    isBase64Output: false,
    signatureConfig: { prefix: 'ds', location: { reference: "/*[local-name(.)='LogoutResponse']/*[local-name(.)='Issuer']", action: 'after' } },
  });
  const fields: Record<string, string> = { SAMLResponse: Buffer.from(signed, 'utf8').toString('base64') };
  if (m.relayState !== undefined) fields.RelayState = m.relayState;
  return { kind: 'post', url, fields, spName: sp.name, signedOut };
}
