/**
 * What every SAML exchange of the identity provider shares: a message as an HTTP binding carries
 * it, read once (size, shape, no DTD: xml.ts) from a registered service provider (its Issuer), its
 * signature checked with that SP's registered certificate only, its freshness; the IdP's own
 * addresses; and the signing of what goes back (RSA-SHA256, exclusive c14n).
 */
import { createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { AppError } from '../errors';
import type { Services } from '../services';
import { findSamlSp, type SamlRequestRow } from '../store/saml';
import { samlLib } from './libraries';
import type { SamlKey } from './keys';
import { spOf, type SamlSp } from './providers';
import { childText, children, decodeMessage, inflateMessage, NS, parseChecked, shapeValidator, type XmlElement } from './xml';

export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
/** How long an assertion may be presented, and how old a request may be when it arrives. */
export const ASSERTION_TTL_MS = 5 * 60_000;
/** Clocks differ: a request a little in the future (or this much past its age) still counts. */
export const SKEW_MS = 3 * 60_000;
/** SAML bindings limit RelayState to 80 bytes. */
const MAX_RELAY_STATE = 80;

export const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
export const STATUS_REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';
export const STATUS_RESPONDER = 'urn:oasis:names:tc:SAML:2.0:status:Responder';
/** The identity provider could not authenticate the principal (SAML core 3.2.2.2). */
export const STATUS_AUTHN_FAILED = 'urn:oasis:names:tc:SAML:2.0:status:AuthnFailed';
/** Second-level statuses (SAML core 3.2.2.2): a request refused as such, and a principal not known to this session. */
export const STATUS_DENIED = 'urn:oasis:names:tc:SAML:2.0:status:RequestDenied';
export const STATUS_UNKNOWN = 'urn:oasis:names:tc:SAML:2.0:status:UnknownPrincipal';

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
export type PostStep = Extract<BrowserStep, { kind: 'post' }>;

export const refuse = (why: string) => new AppError('invalid_input', why);
export const newId = () => `_${randomBytes(20).toString('hex')}`;
export const xmlText = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
export const instant = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const idpEntityId = (s: Services) => `${s.config.publicUrl}/saml/metadata`;
export const ssoUrl = (s: Services) => `${s.config.publicUrl}/saml/sso`;
export const sloUrl = (s: Services) => `${s.config.publicUrl}/saml/slo`;

const pem = (b64: string) => `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;

/** The message's XML, decoded as its binding carries it, and checked for shape. */
export async function readMessage(m: BoundMessage, roots: ReadonlyArray<readonly [string, string]>): Promise<{ xml: string; root: XmlElement }> {
  if (m.relayState !== undefined && Buffer.byteLength(m.relayState, 'utf8') > MAX_RELAY_STATE) {
    throw refuse(`the RelayState is longer than ${MAX_RELAY_STATE} bytes, the most SAML allows`);
  }
  if (m.message === '') throw refuse('this address takes a SAML message from an app (a SAMLRequest); open the app and sign in from there');
  const xml = m.binding === 'redirect' ? inflateMessage(m.message) : decodeMessage(m.message);
  return { xml, root: await parseChecked(xml, roots) };
}

/** The registered SP that issued the message (its Issuer), or a refusal naming the unknown one. */
export async function issuerSp(s: Services, root: XmlElement): Promise<SamlSp> {
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
export function checkSignature(sp: SamlSp, m: BoundMessage, xml: string, root: XmlElement, required: boolean): void {
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
export function checkFresh(s: Services, root: XmlElement): void {
  if (root.getAttribute('Version') !== '2.0') throw refuse('the request is not SAML 2.0 (Version="2.0")');
  const at = Date.parse(root.getAttribute('IssueInstant') ?? '');
  const now = s.clock.now();
  if (!Number.isFinite(at)) throw refuse('the request has no valid IssueInstant');
  if (at > now + SKEW_MS || at < now - ASSERTION_TTL_MS - SKEW_MS)
    throw refuse('the request is too old (or dated in the future); start again from the application');
}

export function requestId(root: XmlElement): string {
  const id = root.getAttribute('ID') ?? '';
  if (!/^[A-Za-z_][\w.-]{0,255}$/.test(id)) throw refuse('the request has no valid ID');
  return id;
}

/**
 * An IdP message signed with `key`, its signature placed after the Issuer of the element `where`
 * names (an XPath): the whole message, or only the element `only` names (an assertion).
 */
export function signMessage(key: SamlKey, xml: string, where: string, only?: string): string {
  return samlLib(shapeValidator.validate).constructSAMLSignature({
    rawSamlMessage: xml,
    ...(only === undefined ? { isMessageSigned: true } : { referenceTagXPath: only }),
    privateKey: key.privateKey,
    signingCert: key.certificateBase64,
    signatureAlgorithm: RSA_SHA256,
    isBase64Output: false,
    signatureConfig: { prefix: 'ds', location: { reference: `${where}/*[local-name(.)='Issuer']`, action: 'after' } },
  });
}

/** A form to post a signed message to `url`, with RelayState returned as given. */
export function postOf(url: string, signed: string, relayState: string | null | undefined, field: 'SAMLResponse' = 'SAMLResponse'): PostStep {
  const fields: Record<string, string> = { [field]: Buffer.from(signed, 'utf8').toString('base64') };
  if (relayState !== null && relayState !== undefined) fields.RelayState = relayState;
  return { kind: 'post', url, fields };
}

/** In response to the SP's request, when there was one (an IdP-initiated sign-in has none). */
export const inResponseTo = (pending: Pick<SamlRequestRow, 'request_id'>): string | null =>
  pending.request_id.startsWith('unsolicited:') ? null : pending.request_id;
