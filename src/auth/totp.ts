/**
 * TOTP (RFC 6238): SHA-1, 6 digits, 30 s steps, ±1 step accepted, 160-bit secrets (otplib).
 * Replay protection lives in the store (see acceptTotpStep): a step is accepted once.
 */
import { createHash, randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';

export const TOTP_PERIOD = 30;
export const RECOVERY_CODE_COUNT = 10;

/** Whether a typed value has the shape of a TOTP code (six digits); anything else may be a recovery code. */
export const isTotpCode = (value: string): boolean => /^\d{6}$/.test(value.trim());

export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

export function totpUri(secret: string, email: string): string {
  return generateURI({ issuer: 'Gatehouse', label: email, secret, algorithm: 'sha1', digits: 6, period: TOTP_PERIOD });
}

/** The time step a code matches (within ±1 step of now and after `afterStep`), or null. */
export async function matchTotp(secret: string, code: string, afterStep: number | null, now: number): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: Math.floor(now / 1000),
      epochTolerance: TOTP_PERIOD,
      ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
    });
    return result.valid ? (result as { timeStep: number }).timeStep : null;
  } catch {
    return null;
  }
}

/** 10 codes like "7kq4-xm2p-9dhe": 60 random bits each, shown once, stored hashed. */
export function newRecoveryCodes(): string[] {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(12);
    const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
    return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
  });
}

export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code.trim().toLowerCase(), 'utf8').digest('hex');
}
