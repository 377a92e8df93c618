/**
 * Gatehouse as a relying party of an upstream provider, by `openid-client` (loaded on first use):
 * discovery (cached for an hour, fetched with a timeout), the authorization URL with PKCE
 * (S256), state and nonce, and the code exchange, whose ID token the library checks fully
 * (signature by the provider's JWKS, issuer, audience, expiry, nonce). An upstream that is down,
 * slow or answers junk becomes one clear AppError, never a hung request or a 500.
 */
import { AppError } from '../errors';
import type { ProviderRow } from '../store/upstream';
import { oauthAuthorizationUrl, oauthExchange } from './oauth2';

// Types only: the library is loaded when someone first signs in through a provider.
import type * as Client from 'openid-client';

/** Seconds an upstream may take to answer one request. */
const UPSTREAM_TIMEOUT_S = 10;
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

const library = (): Promise<typeof Client> => import('openid-client');

const cache = new Map<string, { at: number; config: Client.Configuration }>();

/** A provider's configuration (its discovery document and our client), cached per issuer, client and secret. */
async function configurationOf(p: ProviderRow, now: number): Promise<Client.Configuration> {
  const key = JSON.stringify([p.issuer, p.client_id, p.client_secret]);
  const known = cache.get(key);
  if (known && now - known.at < DISCOVERY_TTL_MS) return known.config;
  const lib = await library();
  let config: Client.Configuration;
  try {
    config = await lib.discovery(new URL(p.issuer), p.client_id, undefined, lib.ClientSecretPost(p.client_secret), {
      timeout: UPSTREAM_TIMEOUT_S,
      // The ID token's signature is checked against the provider's JWKS too (openid-client trusts
      // the token endpoint's TLS by default; a signature check also holds when TLS is not the whole story).
      // An http issuer is the operator's explicit choice (a provider on the same host or network).
      execute: [lib.enableNonRepudiationChecks, ...(p.issuer.startsWith('http:') ? [lib.allowInsecureRequests] : [])],
    });
  } catch (err) {
    throw unavailable(p, err);
  }
  config.timeout = UPSTREAM_TIMEOUT_S;
  cache.set(key, { at: now, config });
  return config;
}

/** A timeout or a connection that failed, here or in the error's causes. */
function unreachable(err: unknown): boolean {
  for (
    let e = err as { name?: string; code?: string; message?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || e.code === 'ECONNREFUSED' || e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET')
      return true;
    if (/fetch failed|aborted|timed? ?out/i.test(e.message ?? '')) return true;
  }
  return false;
}

function unavailable(p: ProviderRow, err: unknown): AppError {
  return new AppError('unavailable', `${p.display_name} did not answer as a sign-in provider should; try again later or sign in another way`, {
    retryAfter: 30,
    cause: err,
  });
}

/** A network failure or timeout is the upstream being down; anything else is a refusal of what it sent (its words for the log only). */
function failed(p: ProviderRow, err: unknown): { refused: string } {
  const e = err as { name?: string; code?: string; message?: string };
  if (unreachable(err)) throw unavailable(p, err);
  return { refused: `${e?.code ?? e?.name ?? 'error'}: ${(e?.message ?? '').slice(0, 160)}` };
}

export interface Begun {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

/** The upstream authorization URL for a new flow: code flow, PKCE S256, fresh state and nonce. */
export async function authorizationUrl(p: ProviderRow, redirectUri: string, now: number): Promise<Begun> {
  if (p.kind !== 'oidc') return oauthAuthorizationUrl(p, redirectUri);
  const lib = await library();
  const config = await configurationOf(p, now);
  const verifier = lib.randomPKCECodeVerifier();
  const state = lib.randomState();
  const nonce = lib.randomNonce();
  const url = lib.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: ['openid', ...(JSON.parse(p.scopes) as string[])].join(' '),
    code_challenge: await lib.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state, nonce, verifier };
}

export interface UpstreamIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  /** What the provider's ID token said of its own sign-in (`amr`, RFC 8176): at most 10 short values, or none. */
  amr: string[];
  /** GitHub: the person's teams (`org/slug`), read when some team maps to a group. */
  teams?: string[];
}

/** At most this many `amr` values are kept, each at most this long: a provider's word, not a place to store things. */
const MAX_AMR = 10;
const MAX_AMR_LENGTH = 32;

/** The ID token's `amr`, as far as it is a list of short strings; anything else says nothing. */
function amrOf(claim: unknown): string[] {
  if (!Array.isArray(claim)) return [];
  const values = claim.filter((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_AMR_LENGTH && /^[\x21-\x7e]+$/.test(v));
  return [...new Set(values)].slice(0, MAX_AMR);
}

/**
 * Exchanges the callback's code: the library checks the state, the PKCE verifier, and the ID
 * token (signature, issuer, audience, expiry, nonce). Any failure is the one refusal a person
 * sees; the library's own words go to the log only.
 */
export async function exchange(
  p: ProviderRow,
  callbackUrl: URL,
  checks: { state: string; nonce: string; verifier: string },
  now: number,
): Promise<{ identity: UpstreamIdentity } | { refused: string } | { denied: { reason: 'no_verified_email' | 'not_in_organization'; message: string } }> {
  if (p.kind !== 'oidc') {
    try {
      const result = await oauthExchange(p, callbackUrl, { state: checks.state, verifier: checks.verifier });
      if ('denied' in result) return { denied: { reason: result.denied.reason, message: result.denied.message } };
      // No ID token, so nothing of the provider's own sign-in: one factor, whatever it asked.
      return { identity: { ...result.identity, amr: [] } };
    } catch (err) {
      return failed(p, err);
    }
  }
  const lib = await library();
  const config = await configurationOf(p, now);
  let claims: Record<string, unknown> | undefined;
  let amr: string[];
  try {
    const tokens = await lib.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: checks.verifier,
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims() as Record<string, unknown> | undefined;
    // Read from the ID token itself (checked above), never from userinfo: it is the provider's word on this sign-in.
    amr = amrOf(claims?.amr);
    // Providers that keep profile claims out of the ID token (OIDC Core 5.4, when an access token
    // is issued) answer them at userinfo, for this same subject (the library checks it).
    if (claims && typeof claims.sub === 'string' && claims.email === undefined && config.serverMetadata().userinfo_endpoint && tokens.access_token) {
      const info = (await lib.fetchUserInfo(config, tokens.access_token, claims.sub)) as Record<string, unknown>;
      claims = { ...claims, email: info.email, email_verified: info.email_verified, name: claims.name ?? info.name };
    }
  } catch (err) {
    return failed(p, err);
  }
  if (!claims || typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 255) return { refused: 'no usable sub claim' };
  const email = typeof claims.email === 'string' && claims.email.length <= 254 ? claims.email : null;
  return {
    identity: {
      subject: claims.sub,
      email,
      emailVerified: claims.email_verified === true,
      name: typeof claims.name === 'string' ? claims.name : null,
      amr,
    },
  };
}
