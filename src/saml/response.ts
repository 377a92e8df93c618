/**
 * The Responses a sign-in ends with, signed: the assertion of who signed in (Subject in the SP's
 * NameID format, SubjectConfirmation, Conditions, AuthnStatement with the session's
 * AuthnContextClassRef, the attributes), each of the assertion and the Response signed; or a
 * Response that signs no one in (Responder, with a second-level status and why).
 */
import { createHmac } from 'node:crypto';
import type { Services } from '../services';
import type { AccountClaims } from '../accounts/claims';
import { authnContextOf } from '../accounts/assurance';
import type { SessionRow } from '../store/sessions';
import { recordSamlSignin, samlPseudonymKey, type SamlRequestRow } from '../store/saml';
import type { SamlKey } from './keys';
import { ASSERTION_TTL_MS, idpEntityId, inResponseTo, instant, newId, postOf, type PostStep, signMessage, STATUS_RESPONDER, xmlText } from './messages';
import { NAMEID_FORMATS, type SamlSp } from './providers';
import { NS } from './xml';

const hmac = (key: string, ...parts: string[]) => createHmac('sha256', key).update(parts.join('\0')).digest('base64url');

/** The attributes every Response carries: FriendlyName for people, the usual URIs as Name. */
const ATTRIBUTES = [
  ['email', 'urn:oid:0.9.2342.19200300.100.1.3'],
  ['name', 'urn:oid:2.16.840.1.113730.3.1.241'],
  ['username', 'urn:oid:0.9.2342.19200300.100.1.1'],
  ['groups', 'urn:oid:1.3.6.1.4.1.5923.1.5.1.1'],
] as const;

const RESPONSE = "/*[local-name(.)='Response']";
const ASSERTION = `${RESPONSE}/*[local-name(.)='Assertion']`;

/**
 * The signed Response saying who signed in, for the pending request, from `session`. What a
 * LogoutRequest from this SP must name to end this session (its NameID and SessionIndex) is
 * recorded with it (logout.ts).
 */
export async function successResponse(
  s: Services,
  key: SamlKey,
  sp: SamlSp,
  pending: SamlRequestRow,
  session: SessionRow,
  sub: string,
  claims: AccountClaims,
): Promise<PostStep> {
  const pseudonymKey = await samlPseudonymKey(s.store.root);
  const nameId = sp.nameid === 'email' ? claims.email : sp.nameid === 'username' ? claims.preferred_username : hmac(pseudonymKey, 'nameid', sp.entityId, sub);
  const sessionIndex = `_${hmac(pseudonymKey, 'session', session.id)}`;
  await recordSamlSignin(s.store.root, { session_id: session.id, sp_id: sp.id, name_id: nameId, session_index: sessionIndex });
  const now = s.clock.now();
  const until = instant(now + ASSERTION_TTL_MS);
  const replyTo = inResponseTo(pending);
  const irt = replyTo === null ? '' : ` InResponseTo="${xmlText(replyTo)}"`;
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
  // The assertion first, then the Response around it.
  const signed = signMessage(key, signMessage(key, xml, ASSERTION, ASSERTION), RESPONSE);
  return postOf(pending.acs_url, signed, pending.relay_state);
}

/** A Response that signs no one in (Responder, with a second-level status and why), signed as every Response is. */
export function failureResponse(s: Services, key: SamlKey, pending: SamlRequestRow, second: string, why: string): PostStep {
  const replyTo = inResponseTo(pending);
  const irt = replyTo === null ? '' : ` InResponseTo="${xmlText(replyTo)}"`;
  const xml =
    `<samlp:Response xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${newId()}" Version="2.0" IssueInstant="${instant(s.clock.now())}" Destination="${xmlText(pending.acs_url)}"${irt}>` +
    `<saml:Issuer>${xmlText(idpEntityId(s))}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${STATUS_RESPONDER}"><samlp:StatusCode Value="${second}"/></samlp:StatusCode><samlp:StatusMessage>${xmlText(why)}</samlp:StatusMessage></samlp:Status>` +
    `</samlp:Response>`;
  return postOf(pending.acs_url, signMessage(key, xml, RESPONSE), pending.relay_state);
}
