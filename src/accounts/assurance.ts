/**
 * How someone signed in, as every protocol tells an app: one reading of a session's way in and
 * second factor. OpenID Connect says it as `amr` (RFC 8176), SAML as the AuthnContextClassRef.
 */
import type { SessionRow } from '../store/sessions';

export type SessionWay = Pick<SessionRow, 'method' | 'two_factor'>;

/**
 * The methods references (amr): a passkey is hardware-bound and verified its user; a password is
 * one factor, or two with TOTP; an upstream provider's sign-in is federated ("fed", as Microsoft's
 * tokens say it), with "otp" when this account's TOTP was asked too.
 */
export function amrOf(session: SessionWay): string[] {
  if (session.method === 'passkey') return ['hwk', 'user'];
  const first = session.method === 'provider' ? 'fed' : 'pwd';
  return session.two_factor ? [first, 'otp'] : [first];
}

/** SAML's AuthnContextClassRef for the same facts as amrOf. */
export function authnContextOf(session: SessionWay): string {
  if (session.method === 'passkey') return 'urn:gatehouse:ac:classes:passkey';
  if (session.two_factor) return 'https://refeds.org/profile/mfa';
  if (session.method === 'provider') return 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified';
  return 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';
}
