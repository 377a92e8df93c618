/**
 * How someone signed in, as every protocol tells an app: one reading of a session's way in, its
 * second factor and when the person last proved who they are. OpenID Connect says it as `amr`
 * (RFC 8176), `acr` and `auth_time`; SAML as the AuthnContextClassRef and AuthnInstant; forward
 * authentication as its two-factor rule. Two levels: single factor, and multi-factor (a second
 * factor checked here, or a passkey that verified its user).
 */
import type { SessionRow } from '../store/sessions';

export type SessionWay = Pick<SessionRow, 'method' | 'two_factor' | 'upstream_amr'> & Partial<Pick<SessionRow, 'second_factor'>>;

/** The REFEDS assurance profiles, as `acr` and as SAML's AuthnContextClassRef. */
export const ACR_MFA = 'https://refeds.org/profile/mfa';
export const ACR_SFA = 'https://refeds.org/profile/sfa';
export const ACR_VALUES = [ACR_MFA, ACR_SFA] as const;

/**
 * SAML's AuthnContextClassRefs, the one list: what an assertion says of a sign-in (authnContextOf)
 * and what a request's RequestedAuthnContext is read against. Two factors are REFEDS MFA; one is
 * what that factor was.
 */
export const AUTHN_CONTEXT = {
  mfa: ACR_MFA,
  password: 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport',
  passkey: 'urn:oasis:names:tc:SAML:2.0:ac:classes:X509',
  provider: 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
  mail: 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
  recovery: 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
} as const;

/** The classes a one-factor sign-in is said as. */
export const ONE_FACTOR_CONTEXTS: ReadonlySet<string> = new Set([AUTHN_CONTEXT.password, AUTHN_CONTEXT.passkey, AUTHN_CONTEXT.provider]);

/** RFC 8176's registered values: what an upstream provider's `amr` may add (anything else is not repeated). */
const REGISTERED_AMR = new Set([
  'face',
  'fpt',
  'geo',
  'hwk',
  'iris',
  'kba',
  'mca',
  'mfa',
  'otp',
  'pin',
  'pop',
  'pwd',
  'rba',
  'retina',
  'sc',
  'sms',
  'swk',
  'tel',
  'user',
  'vbm',
  'wia',
]);

/** Whether the session stands on two factors. An upstream provider's own `amr` never makes it so: only a factor checked here does. */
export const isMultiFactor = (session: Pick<SessionRow, 'two_factor'>): boolean => session.two_factor;

/**
 * The methods references (amr): a passkey is hardware-bound ("hwk"), and with user verification
 * two factors ("user", "mfa"); a password is "pwd"; an upstream provider's sign-in is federated
 * ("fed"), followed by what the provider said of its own sign-in (its registered values only);
 * a code mailed to the address (or an administrator's recovery link) is a one-time code ("otp").
 * A second factor checked here after either adds what it was ("otp" for a TOTP code; "hwk",
 * "user" for a passkey) and "mfa".
 */
export function amrOf(session: SessionWay): string[] {
  const mfa = isMultiFactor(session);
  if (session.method === 'passkey') return mfa ? ['hwk', 'user', 'mfa'] : ['hwk'];
  // A code mailed to the address, or an administrator's one-time link: something the person was sent ("otp").
  const amr =
    session.method === 'provider'
      ? ['fed', ...upstreamAmr(session.upstream_amr).filter((v) => v !== 'mfa')]
      : session.method === 'mail' || session.method === 'recovery'
        ? ['otp']
        : ['pwd'];
  if (!mfa) return amr;
  const second = session.second_factor === 'hwk' ? ['hwk', 'user'] : ['otp'];
  return [...new Set([...amr, ...second, 'mfa'])];
}

/** The assurance level as OpenID Connect's `acr`. */
export const acrOf = (session: Pick<SessionRow, 'two_factor'>): string => (isMultiFactor(session) ? ACR_MFA : ACR_SFA);

/** SAML's AuthnContextClassRef for the same facts: REFEDS MFA for two factors, else what the one factor was. */
export function authnContextOf(session: SessionWay): string {
  return isMultiFactor(session) ? AUTHN_CONTEXT.mfa : AUTHN_CONTEXT[session.method];
}

/**
 * The step-up decision, the one every protocol and every use of a sign-in asks: whether a sign-in
 * at level `acr` falls short of what is wanted. `twoFactors`: the app needs them (a client's, a
 * service provider's or a proxied app's two-factor setting, as it stands now) or the request asks
 * for them (asksForMfa). At an authorization a sign-in that falls short is asked for its second
 * factor; at a use of a token issued at that level (a code, a refresh token, an access token at
 * userinfo or introspection) it is refused. A level not known (a token that recorded none) falls
 * short of two factors.
 */
export const fallsShort = (acr: string | undefined, twoFactors: boolean): boolean => twoFactors && acr !== ACR_MFA;

/**
 * Whether an OpenID Connect request asks for two factors: `acr_values` naming REFEDS MFA, or an
 * essential `acr` claim that allows only it. `claims`: the claims parameter, parsed or as sent
 * (JSON text; anything else asks nothing).
 */
export function asksForMfa(acrValues: unknown, claimsParameter: unknown): boolean {
  if (typeof acrValues === 'string' && acrValues.split(' ').includes(ACR_MFA)) return true;
  const claims = typeof claimsParameter === 'string' ? parsed(claimsParameter) : claimsParameter;
  const acr = (claims as { id_token?: { acr?: { essential?: boolean; value?: unknown; values?: unknown } } } | undefined)?.id_token?.acr;
  if (!acr || acr.essential !== true) return false;
  const wanted = acr.value !== undefined ? [acr.value] : Array.isArray(acr.values) ? acr.values : [];
  return wanted.length > 0 && wanted.every((v) => v === ACR_MFA);
}

function upstreamAmr(kept: string | null): string[] {
  if (!kept) return [];
  try {
    const values = JSON.parse(kept) as unknown;
    return Array.isArray(values) ? [...new Set(values.filter((v): v is string => typeof v === 'string' && REGISTERED_AMR.has(v)))] : [];
  } catch {
    return [];
  }
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
