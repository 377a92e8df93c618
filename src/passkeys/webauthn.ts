/**
 * The WebAuthn protocol, by `@simplewebauthn/server` (loaded on first use, like the other
 * optional libraries): options for the browser and the checks of what it answers. Gatehouse
 * adds what the library leaves to its caller: the relying party (the public URL's host, or
 * --passkey-rp-id), the shape and size of a response before any decoding, and the challenge it
 * names (which the store then spends, once).
 *
 * Attestation `none` is asked for and enough: Gatehouse does not restrict which authenticator
 * models may hold a passkey (a list of trusted vendors is an enterprise's choice, and a
 * synced passkey carries no attestation anyway); the signature over each sign-in's challenge
 * is what proves possession.
 */
import { AppError } from '../errors';
import type { Config } from '../config';

// Types only: the library is loaded when a passkey ceremony first runs.
import type * as Lib from '@simplewebauthn/server';

export type CreationOptions = Awaited<ReturnType<typeof Lib.generateRegistrationOptions>>;
export type RequestOptions = Awaited<ReturnType<typeof Lib.generateAuthenticationOptions>>;
export type RegistrationJSON = Parameters<typeof Lib.verifyRegistrationResponse>[0]['response'];
export type AuthenticationJSON = Parameters<typeof Lib.verifyAuthenticationResponse>[0]['response'];

/** Five minutes to finish a ceremony (the options' timeout says the same to the browser). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

export const library = (): Promise<typeof Lib> => import('@simplewebauthn/server');

export interface RelyingParty {
  id: string;
  origin: string;
}

/** The relying party as configured now (the public URL may be set when the server binds). */
export function relyingParty(config: Config): RelyingParty {
  const url = new URL(config.publicUrl);
  return { id: config.passkeyRpId ?? url.hostname, origin: url.origin };
}

const B64URL = /^[A-Za-z0-9_-]*$/;
/** Generous bounds: a credential id is at most 1023 bytes; attestation objects with certificates run to a few KiB. */
const LIMITS = { id: 1400, clientDataJSON: 4096, attestationObject: 16384, authenticatorData: 4096, signature: 1024, userHandle: 128 } as const;

function b64(value: unknown, field: string, max: number, optional = false): string | undefined {
  if (value === undefined || value === null) {
    if (optional) return undefined;
    throw new AppError('invalid_input', `${field} is required`);
  }
  if (typeof value !== 'string') throw new AppError('invalid_input', `${field} must be a base64url string`);
  if (value.length === 0 || value.length > max || !B64URL.test(value)) {
    throw new AppError('invalid_input', `${field} must be a base64url string of at most ${max} characters`);
  }
  return value;
}

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AppError('invalid_input', `${field} must be an object`);
  return value as Record<string, unknown>;
}

function common(value: unknown): { outer: Record<string, unknown>; inner: Record<string, unknown>; id: string } {
  const outer = object(value, 'response');
  const id = b64(outer.id, 'response.id', LIMITS.id)!;
  const rawId = b64(outer.rawId, 'response.rawId', LIMITS.id)!;
  if (rawId !== id) throw new AppError('invalid_input', 'response.rawId must equal response.id');
  if (outer.type !== 'public-key') throw new AppError('invalid_input', 'response.type must be "public-key"');
  const inner = object(outer.response, 'response.response');
  b64(inner.clientDataJSON, 'response.response.clientDataJSON', LIMITS.clientDataJSON);
  return { outer, inner, id };
}

/** A registration response, its shape checked (nothing decoded yet). */
export function registrationResponse(value: unknown): RegistrationJSON {
  const { outer, inner } = common(value);
  b64(inner.attestationObject, 'response.response.attestationObject', LIMITS.attestationObject);
  if (
    inner.transports !== undefined &&
    (!Array.isArray(inner.transports) || inner.transports.length > 8 || inner.transports.some((t) => typeof t !== 'string' || t.length > 16))
  ) {
    throw new AppError('invalid_input', 'response.response.transports must be a short list of names');
  }
  return { ...outer, clientExtensionResults: {} } as unknown as RegistrationJSON;
}

/** An authentication response, its shape checked (nothing decoded yet). */
export function authenticationResponse(value: unknown): AuthenticationJSON {
  const { outer, inner } = common(value);
  b64(inner.authenticatorData, 'response.response.authenticatorData', LIMITS.authenticatorData);
  b64(inner.signature, 'response.response.signature', LIMITS.signature);
  b64(inner.userHandle, 'response.response.userHandle', LIMITS.userHandle, true);
  return { ...outer, clientExtensionResults: {} } as unknown as AuthenticationJSON;
}

/** The challenge the browser signed, read from clientDataJSON (the library re-checks it against the one spent). */
export function challengeOf(response: { response: { clientDataJSON: string } }): string {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
  } catch {
    throw new AppError('invalid_input', 'response.response.clientDataJSON is not JSON');
  }
  const challenge = (data as { challenge?: unknown } | null)?.challenge;
  if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 64 || !B64URL.test(challenge)) {
    throw new AppError('invalid_input', 'response.response.clientDataJSON names no challenge');
  }
  return challenge;
}

/** The library's refusal (a wrong origin, RP id, signature, type) as the one answer a client gets. */
export function refused(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('passkey_invalid', 'the passkey did not verify; try again', { cause: err });
}
