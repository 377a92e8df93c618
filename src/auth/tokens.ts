/**
 * JWT bearer tokens: HS256 only, secret held as a KeyObject made once (jsonwebtoken would
 * otherwise try to parse a string secret as a PEM key on every call: ~50× slower).
 */
import { createSecretKey, KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { AppError } from '../errors';
import type { Clock } from '../clock';

export interface TokenSubject {
  referenceId: string;
  email: string;
  name: string;
  authVersion: number;
}

export interface Claims {
  iss: string;
  sub: string;
  email: string;
  name: string;
  iat: number;
  nbf: number;
  exp: number;
  jti: string;
  auth_version: number;
}

const CLOCK_TOLERANCE_SECONDS = 30;

export class TokenService {
  private readonly key: KeyObject;

  constructor(
    secret: Buffer,
    private readonly issuer: string,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {
    if (secret.length < 32) throw new Error('the JWT secret must be at least 256 bits');
    this.key = createSecretKey(secret);
  }

  sign(subject: TokenSubject): string {
    const iat = Math.floor(this.clock.now() / 1000);
    const claims: Claims = {
      iss: this.issuer,
      sub: subject.referenceId,
      email: subject.email,
      name: subject.name,
      iat,
      nbf: iat,
      exp: iat + this.ttlSeconds,
      jti: randomUUID(),
      auth_version: subject.authVersion,
    };
    return jwt.sign(claims, this.key, { algorithm: 'HS256' });
  }

  /** Signature, algorithm, issuer and times; the caller checks auth_version against the store. */
  verify(token: string): Claims {
    let payload: unknown;
    try {
      payload = jwt.verify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.issuer,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        clockTimestamp: Math.floor(this.clock.now() / 1000),
      });
    } catch {
      throw invalidToken();
    }
    const c = payload as Partial<Claims> | string;
    if (
      typeof c !== 'object' ||
      typeof c.exp !== 'number' || // jsonwebtoken accepts tokens without exp; we never do
      typeof c.sub !== 'string' ||
      typeof c.auth_version !== 'number' ||
      !Number.isInteger(c.auth_version)
    ) {
      throw invalidToken();
    }
    return c as Claims;
  }
}

export function invalidToken(): AppError {
  return new AppError('invalid_token', 'the access token is not valid; sign in again');
}
