/**
 * JWT bearer tokens, signed with the key ring's current key (RS256 by default) and a `kid`
 * header. Verification picks the key by `kid` and allows only that key's algorithm, so `none`,
 * HS256 signed with a public key, and keys named by the token itself (`jku`, `jwk`, `x5u`,
 * `x5c`) are refused. The HS256 secret of an upgraded store verifies its own tokens (no kid,
 * issued before the upgrade) until they expire. Verified tokens are kept in a small bounded
 * cache (signature checks cost tens of microseconds); the store checks of every request still run.
 */
import { randomUUID } from 'node:crypto';
// Types only: the library is loaded at the first token signed or checked (scripts/build.mjs bundles
// it apart), so an admin command, and a server until its first token, never evaluate it.
import type * as Jwt from 'jsonwebtoken';
import { AppError } from '../errors';
import type { Clock } from '../clock';
import type { KeyObject } from 'node:crypto';
import type { SigningAlg } from './keys';

let jwtLoaded: typeof Jwt | null = null;
/** jsonwebtoken, loaded once. */
async function jwtLib(): Promise<typeof Jwt> {
  if (jwtLoaded) return jwtLoaded;
  const m = (await import('jsonwebtoken')) as typeof Jwt & { default?: typeof Jwt };
  jwtLoaded = m.default ?? m;
  return jwtLoaded;
}

/** Where tokens get their keys (runtime/key-ring.ts keeps them in the store). */
export interface KeySource {
  signing(): Promise<{ kid: string; alg: SigningAlg; key: KeyObject }>;
  verifier(kid: string): Promise<{ alg: SigningAlg; key: KeyObject } | undefined>;
  legacyKey(): { key: KeyObject; issuedBefore: number } | null;
}

export interface TokenSubject {
  referenceId: string;
  email: string;
  name: string;
  authVersion: number;
  /** The session the token belongs to. */
  sessionId: string;
  /** When that session ends (ms): the token never outlives it (a recovery link's 15 minutes). */
  sessionEndsAt?: number;
}

export interface Claims {
  iss: string;
  /** The audience: Gatehouse's public URL (its API, and the apps that accept its access tokens). */
  aud?: string;
  sub: string;
  email: string;
  name: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  auth_version: number;
  /** The session (absent only in HS256 tokens of an upgraded store). */
  sid?: string;
}

/** Verified claims and the key that signed them (null: the legacy HS256 secret). */
export interface Verified {
  claims: Claims;
  kid: string | null;
}

const CLOCK_TOLERANCE_SECONDS = 30;
/** The issuer of tokens signed with the HS256 secret before keys existed. */
const LEGACY_ISSUER = 'gatehouse';
const FOREIGN_KEY_HEADERS = ['jku', 'jwk', 'x5u', 'x5c', 'crit'];
const CACHE_SIZE = 4096;
const ACCESS_TOKEN_TYPE = 'at+jwt';
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);

export class TokenService {
  /** token → what verifying it gave; oldest entries leave first. */
  private readonly cache = new Map<string, Verified>();

  constructor(
    private readonly keys: KeySource,
    /** The issuer (the public URL), read at each use: it is known only once the server is bound. */
    private readonly issuerOf: () => string,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {}

  async sign(subject: TokenSubject): Promise<string> {
    const iat = Math.floor(this.clock.now() / 1000);
    const claims: Claims = {
      iss: this.issuerOf(),
      aud: this.issuerOf(),
      sub: subject.referenceId,
      email: subject.email,
      name: subject.name,
      iat,
      nbf: iat,
      // A backend that checks only the signature trusts the token to its exp: never past its session's end.
      exp:
        subject.sessionEndsAt === undefined
          ? iat + this.ttlSeconds
          : Math.max(iat + 1, Math.min(iat + this.ttlSeconds, Math.floor(subject.sessionEndsAt / 1000))),
      jti: randomUUID(),
      auth_version: subject.authVersion,
      sid: subject.sessionId,
    };
    const signer = await this.keys.signing();
    // typ at+jwt and an audience (RFC 9068): an ID token shares issuer, key and sub with these, and
    // a backend that checks typ and aud (as the README's recipe does) never takes one for the other.
    const jwt = await jwtLib();
    return jwt.sign(claims, signer.key, { algorithm: signer.alg, keyid: signer.kid, header: { alg: signer.alg, typ: ACCESS_TOKEN_TYPE } });
  }

  /**
   * A logout token (OpenID Connect Back-Channel Logout 1.0) for one client: the session (sid) of
   * the account (sub) that ended. Signed when it is sent, so a retry hours later is still fresh;
   * its jti is the message's id, the same on every try (a receiver that saw it once may say so).
   */
  async signLogout(to: { clientId: string; sub: string; sid: string; jti: string }): Promise<string> {
    const iat = Math.floor(this.clock.now() / 1000);
    const claims = {
      iss: this.issuerOf(),
      aud: to.clientId,
      sub: to.sub,
      sid: to.sid,
      iat,
      exp: iat + 120,
      jti: to.jti,
      events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    };
    const signer = await this.keys.signing();
    const jwt = await jwtLib();
    return jwt.sign(claims, signer.key, { algorithm: signer.alg, keyid: signer.kid, header: { alg: signer.alg, typ: 'logout+jwt' } });
  }

  /** Signature, algorithm, issuer and times; the caller checks the rest against the store. */
  async verify(token: string): Promise<Verified> {
    const now = Math.floor(this.clock.now() / 1000);
    const cached = this.cache.get(token);
    if (cached) {
      const { exp, nbf } = cached.claims;
      if (now - CLOCK_TOLERANCE_SECONDS < exp && nbf <= now + CLOCK_TOLERANCE_SECONDS) return cached;
      this.cache.delete(token);
      throw invalidToken();
    }
    const verified = await this.verifySignature(token, now);
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(token, verified);
    return verified;
  }

  private async verifySignature(token: string, now: number): Promise<Verified> {
    const jwt = jwtLoaded ?? (await jwtLib());
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload !== 'object') throw invalidToken();
    const header = decoded.header as unknown as Record<string, unknown>;
    if (FOREIGN_KEY_HEADERS.some((h) => Object.hasOwn(header, h))) throw invalidToken();
    let claims: Claims;
    let kid: string | null;
    if (typeof header.kid === 'string') {
      const verifier = await this.keys.verifier(header.kid);
      if (!verifier || header.alg !== verifier.alg) throw invalidToken();
      // Only access tokens: an ID token (typ JWT, aud a client) is refused here.
      if (typeof header.typ !== 'string' || !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) throw invalidToken();
      claims = this.check(jwt, token, verifier.key, verifier.alg, this.issuerOf(), now, this.issuerOf());
      if (typeof claims.sid !== 'string') throw invalidToken();
      kid = header.kid;
    } else {
      // Only a store upgraded from HS256 has a legacy key; it never signs again.
      const legacy = this.keys.legacyKey();
      if (!legacy || header.alg !== 'HS256' || header.kid !== undefined) throw invalidToken();
      claims = this.check(jwt, token, legacy.key, 'HS256', LEGACY_ISSUER, now);
      if (claims.iat * 1000 >= legacy.issuedBefore + CLOCK_TOLERANCE_SECONDS * 1000) throw invalidToken();
      // Nothing the old release signed lived longer than a token's lifetime: an exp further out
      // (ten years, say) is not one of its tokens, or one no longer to be honoured.
      if (claims.exp * 1000 > legacy.issuedBefore + (this.ttlSeconds + CLOCK_TOLERANCE_SECONDS) * 1000) throw invalidToken();
      kid = null;
    }
    return { claims, kid };
  }

  private check(
    jwt: typeof Jwt,
    token: string,
    key: Parameters<typeof Jwt.verify>[1],
    alg: Jwt.Algorithm,
    issuer: string,
    now: number,
    audience?: string,
  ): Claims {
    let payload: unknown;
    try {
      payload = jwt.verify(token, key, {
        algorithms: [alg],
        issuer,
        ...(audience === undefined ? {} : { audience }),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        clockTimestamp: now,
      });
    } catch {
      throw invalidToken();
    }
    const c = payload as Partial<Claims> | string;
    if (
      typeof c !== 'object' ||
      typeof c.exp !== 'number' || // jsonwebtoken accepts tokens without exp; we never do
      typeof c.nbf !== 'number' ||
      typeof c.iat !== 'number' ||
      typeof c.sub !== 'string' ||
      typeof c.auth_version !== 'number' ||
      !Number.isInteger(c.auth_version)
    ) {
      throw invalidToken();
    }
    return c as Claims;
  }
}

/** A refused bearer credential, in words for what it is: an access token refreshes; an API key is replaced. */
export function invalidToken(kind: 'access_token' | 'api_key' = 'access_token'): AppError {
  return kind === 'api_key'
    ? new AppError(
        'invalid_token',
        'the API key is not valid: it was revoked or has expired, or its account was disabled, signed out everywhere or given a new password; make a new key',
      )
    : new AppError('invalid_token', 'the access token is not valid or has expired; refresh it (refresh action) or sign in again');
}
