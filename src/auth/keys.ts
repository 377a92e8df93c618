/**
 * Signing key material: a new key pair with a random kid, as the store keeps it. The key ring
 * that reads and rotates keys in the store is runtime/key-ring.ts.
 */
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import { newShellSafeId } from './ids';

export type SigningAlg = 'RS256' | 'ES256';
export const SIGNING_ALGS: readonly SigningAlg[] = ['RS256', 'ES256'];

export interface PublicJwk {
  kid: string;
  alg: string;
  use: 'sig';
  kty: string;
  [member: string]: unknown;
}

const generate = promisify(generateKeyPair);

/** A new key pair with a random kid (never starting with a dash: `keys retire <kid>`), as the store keeps it. */
export async function newSigningKey(alg: SigningAlg): Promise<{ kid: string; alg: SigningAlg; privateKey: string; publicJwk: string }> {
  const pair = alg === 'RS256' ? await generate('rsa', { modulusLength: 2048 }) : await generate('ec', { namedCurve: 'P-256' });
  const kid = newShellSafeId(12);
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  return { kid, alg, privateKey: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicJwk: JSON.stringify(jwk) };
}
