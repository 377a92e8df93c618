/**
 * Single logout: a LogoutRequest from a registered SP ends the browser's Gatehouse session only
 * when it names a sign-in this very session made at that SP (the NameID and SessionIndex its
 * Response said), is addressed to /saml/slo and was not answered before; it is answered with a
 * signed LogoutResponse, a failure status when the session is kept.
 */
import { createSign } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { hasSamlSignin, useSamlLogoutId } from '../store/saml';
import { samlKeys, type SamlKey } from './keys';
import {
  ASSERTION_TTL_MS,
  type BoundMessage,
  type BrowserStep,
  checkFresh,
  checkSignature,
  idpEntityId,
  instant,
  issuerSp,
  newId,
  postOf,
  readMessage,
  refuse,
  requestId,
  RSA_SHA256,
  signMessage,
  SKEW_MS,
  sloUrl,
  STATUS_DENIED,
  STATUS_REQUESTER,
  STATUS_SUCCESS,
  STATUS_UNKNOWN,
  xmlText,
} from './messages';
import { BINDING, type SamlSp } from './providers';
import { attr, childText, children, NS, type XmlElement } from './xml';

/** The query of an HTTP-Redirect LogoutResponse, signed with the IdP's key (SAML bindings 3.4.4.1). */
function signedRedirect(key: SamlKey, url: string, xml: string, relayState: string | undefined): string {
  const enc = encodeURIComponent;
  let query = `SAMLResponse=${enc(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`;
  if (relayState !== undefined) query += `&RelayState=${enc(relayState)}`;
  query += `&SigAlg=${enc(RSA_SHA256)}`;
  const signature = createSign('RSA-SHA256').update(query).sign(key.privateKey, 'base64');
  return `${url}${url.includes('?') ? '&' : '?'}${query}&Signature=${enc(signature)}`;
}

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
  const signed = signMessage(key!, xmlOut, "/*[local-name(.)='LogoutResponse']");
  return { ...postOf(url, signed, m.relayState), spName: sp.name, signedOut };
}
