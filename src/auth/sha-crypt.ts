/**
 * sha512-crypt (`$6$[rounds=N$]salt$hash`), Ulrich Drepper's published algorithm ("Unix crypt
 * using SHA-256 and SHA-512", the one glibc's crypt(3), `openssl passwd -6` and Authelia use).
 * Only verified, for hashes brought in by an import: Gatehouse never makes one. Written here
 * because npm's implementations are either ESM-only with little use (unixcrypt) or unmaintained;
 * test/cli/import-hashes.test.ts holds it to `openssl passwd -6` output.
 *
 * Rounds are a loop of SHA-512 on the event loop, so it yields every few thousand rounds
 * (a sign-in never stalls the server), and imports refuse more than MAX_SHA_CRYPT_ROUNDS.
 */
import { createHash } from 'node:crypto';

export const MAX_SHA_CRYPT_ROUNDS = 100_000;
const DEFAULT_ROUNDS = 5000;
const ALPHABET = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const YIELD_EVERY = 2000;

export interface ShaCryptHash {
  rounds: number;
  /** Whether the string names its rounds (`rounds=N$`): the output does too. */
  roundsGiven: boolean;
  salt: string;
  hash: string;
}

/** The parts of a `$6$` string, or null when it is not one (86 characters of hash, a salt without `$`). */
export function parseShaCrypt(stored: string): ShaCryptHash | null {
  const m = /^\$6\$(?:rounds=(\d{1,10})\$)?([^$:\n]{0,16})\$([./0-9A-Za-z]{86})$/.exec(stored);
  if (!m) return null;
  const asked = m[1] === undefined ? DEFAULT_ROUNDS : Number(m[1]);
  // The algorithm clamps rounds to [1000, 999999999]; so do we, to compute the same hash.
  return { rounds: Math.min(Math.max(asked, 1000), 999_999_999), roundsGiven: m[1] !== undefined, salt: m[2], hash: m[3] };
}

const sha512 = (...parts: Buffer[]) => {
  const h = createHash('sha512');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** `length` bytes of `digest` repeated (the P and S sequences of the specification). */
function repeatTo(digest: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 64) digest.copy(out, i, 0, Math.min(64, length - i));
  return out;
}

/** The full `$6$…` string for `password` with the parts of `like` (its salt and rounds). */
export async function shaCrypt512(password: string, like: Omit<ShaCryptHash, 'hash'>): Promise<string> {
  const pw = Buffer.from(password, 'utf8');
  const salt = Buffer.from(like.salt, 'utf8').subarray(0, 16);
  const b = sha512(pw, salt, pw);
  const a = createHash('sha512').update(pw).update(salt);
  let i = pw.length;
  for (; i > 64; i -= 64) a.update(b);
  a.update(b.subarray(0, i));
  for (i = pw.length; i > 0; i >>= 1) a.update(i & 1 ? b : pw);
  let c = a.digest();
  const dp = createHash('sha512');
  for (i = 0; i < pw.length; i++) dp.update(pw);
  const p = repeatTo(dp.digest(), pw.length);
  const ds = createHash('sha512');
  for (i = 0; i < 16 + c[0]; i++) ds.update(salt);
  const s = repeatTo(ds.digest(), salt.length);
  for (let r = 0; r < like.rounds; r++) {
    const h = createHash('sha512');
    h.update(r & 1 ? p : c);
    if (r % 3) h.update(s);
    if (r % 7) h.update(p);
    h.update(r & 1 ? c : p);
    c = h.digest();
    // Thousands of rounds are milliseconds of one core: let the rest of the server run between them.
    if (r % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  let out = '';
  const put = (b2: number, b1: number, b0: number, n: number) => {
    let w = (b2 << 16) | (b1 << 8) | b0;
    for (let k = 0; k < n; k++, w >>= 6) out += ALPHABET[w & 0x3f];
  };
  // The specification's byte order: triples (i, i+21, i+42), rotated by i mod 3, then the last byte.
  for (let k = 0; k < 21; k++) {
    const t = [c[k], c[k + 21], c[k + 42]];
    const r = k % 3;
    put(t[r % 3], t[(r + 1) % 3], t[(r + 2) % 3], 4);
  }
  put(0, 0, c[63], 2);
  return `$6$${like.roundsGiven ? `rounds=${like.rounds}$` : ''}${salt.toString('utf8')}$${out}`;
}
