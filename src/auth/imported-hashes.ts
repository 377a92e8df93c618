/**
 * Password hashes other servers made, as an import brings them: which ones Gatehouse can check at
 * a first sign-in (after which it stores its own bcrypt), and which it refuses at import. Every
 * kind has a ceiling on its work: a hostile file must not make one sign-in burn a core for
 * minutes (a bcrypt cost of 31, a billion PBKDF2 iterations, gigabytes of argon2 memory).
 */
import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { MAX_SHA_CRYPT_ROUNDS, parseShaCrypt } from './sha-crypt';

/**
 * The ceilings keep one check near a second of one core (bcrypt 13, PBKDF2-SHA512 at a million, 100,000
 * sha512-crypt rounds, argon2 at 128 MiB × 2 passes or 64 MiB × 4), above what the servers people move
 * from make by default (Auth0's bcrypt 10, Keycloak's 210,000 or 27,500 PBKDF2 iterations, Authelia's
 * argon2id m=65536,t=3 and 50,000 sha512-crypt rounds).
 */
export const MAX_PBKDF2_ITERATIONS = 1_000_000;
export const MAX_BCRYPT_COST = 13;
/** argon2's memory in KiB (128 MiB), passes and lanes, and memory × passes (its work). */
export const MAX_ARGON2 = { m: 131_072, t: 10, p: 8, work: 262_144 } as const;

export type HashKind = 'bcrypt' | 'argon2' | 'sha512-crypt' | 'pbkdf2';

export type HashCheck = { ok: true; kind: HashKind } | { ok: false; reason: string };

const PBKDF2 = /^\$pbkdf2(?:-(sha256|sha512))?\$(?:i=)?(\d{1,9})\$([A-Za-z0-9+/.]+={0,2})\$([A-Za-z0-9+/.]+={0,2})$/;
const DIGESTS: Record<string, string> = { sha256: 'sha256', sha512: 'sha512', '': 'sha1' };

export interface Pbkdf2Hash {
  digest: string;
  iterations: number;
  salt: Buffer;
  hash: Buffer;
}

/** Standard base64 with or without padding, or passlib's "adapted" form ('.' for '+'). */
const b64 = (text: string) => Buffer.from(text.replace(/\./g, '+'), 'base64');

/**
 * `$pbkdf2-sha256$i=27500$<salt>$<hash>` (PHC style, as the import stores Keycloak's), passlib's
 * `$pbkdf2-sha512$25000$<salt>$<hash>`, and `$pbkdf2$…` for SHA-1 (Keycloak's plain "pbkdf2").
 */
export function parsePbkdf2(stored: string): Pbkdf2Hash | null {
  const m = PBKDF2.exec(stored);
  if (!m) return null;
  const hash = b64(m[4]);
  if (hash.length < 16 || hash.length > 128) return null;
  return { digest: DIGESTS[m[1] ?? ''], iterations: Number(m[2]), salt: b64(m[3]), hash };
}

/** The PHC-style string the import stores for a PBKDF2 credential (salt and hash as raw bytes). */
export function pbkdf2String(digest: 'sha1' | 'sha256' | 'sha512', iterations: number, salt: Buffer, hash: Buffer): string {
  const name = digest === 'sha1' ? 'pbkdf2' : `pbkdf2-${digest}`;
  const plain = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
  return `$${name}$i=${iterations}$${plain(salt)}$${plain(hash)}`;
}

/** Whether an imported hash is one Gatehouse can check, within the ceilings; else why not (for the report). */
export function checkImportedHash(stored: string): HashCheck {
  if (/^\$2[aby]\$/.test(stored)) {
    if (!/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(stored)) return { ok: false, reason: 'malformed bcrypt hash' };
    const cost = Number(stored.slice(4, 6));
    if (cost < 4 || cost > MAX_BCRYPT_COST) return { ok: false, reason: `bcrypt cost ${cost} is outside 4 to ${MAX_BCRYPT_COST}` };
    return { ok: true, kind: 'bcrypt' };
  }
  if (stored.startsWith('$argon2')) {
    const m = /^\$argon2(id|i|d)\$(?:v=(16|19)\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(stored);
    if (!m) return { ok: false, reason: 'malformed argon2 hash' };
    const [m2, t, p] = [Number(m[3]), Number(m[4]), Number(m[5])];
    if (m2 > MAX_ARGON2.m || t > MAX_ARGON2.t || p > MAX_ARGON2.p || m2 * t > MAX_ARGON2.work || t < 1 || p < 1) {
      return {
        ok: false,
        reason: `argon2 parameters m=${m2},t=${t},p=${p} exceed m=${MAX_ARGON2.m},t=${MAX_ARGON2.t},p=${MAX_ARGON2.p} (and m×t=${MAX_ARGON2.work})`,
      };
    }
    return { ok: true, kind: 'argon2' };
  }
  if (stored.startsWith('$6$')) {
    const roundsAsked = /^\$6\$rounds=(\d+)\$/.exec(stored);
    if (roundsAsked && Number(roundsAsked[1]) > MAX_SHA_CRYPT_ROUNDS) {
      return { ok: false, reason: `sha512-crypt rounds ${roundsAsked[1].slice(0, 12)} exceed ${MAX_SHA_CRYPT_ROUNDS}` };
    }
    return parseShaCrypt(stored) ? { ok: true, kind: 'sha512-crypt' } : { ok: false, reason: 'malformed sha512-crypt hash' };
  }
  if (stored.startsWith('$pbkdf2')) {
    const parsed = parsePbkdf2(stored);
    if (!parsed) return { ok: false, reason: 'malformed PBKDF2 hash' };
    if (parsed.iterations < 1 || parsed.iterations > MAX_PBKDF2_ITERATIONS) {
      return { ok: false, reason: `PBKDF2 iterations ${parsed.iterations} are outside 1 to ${MAX_PBKDF2_ITERATIONS}` };
    }
    return { ok: true, kind: 'pbkdf2' };
  }
  return { ok: false, reason: 'unknown hash format (bcrypt, argon2, sha512-crypt and PBKDF2 are known)' };
}

const pbkdf2Async = promisify(pbkdf2);

/** Checks a password against a PBKDF2 hash (node's pbkdf2 runs on libuv's pool, off the event loop). */
export async function verifyPbkdf2(password: string, parsed: Pbkdf2Hash): Promise<boolean> {
  const derived = await pbkdf2Async(password, parsed.salt, parsed.iterations, parsed.hash.length, parsed.digest);
  // Prevent any possibility of a timing attack by using a constant-time comparison.
  return timingSafeEqual(derived, parsed.hash);
}
