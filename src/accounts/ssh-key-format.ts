/**
 * SSH public keys as `authorized_keys` and `ssh-keygen` write them (`type base64 comment`), read
 * and checked (contract section 25): the OpenSSH wire form (RFC 4253 6.6, RFC 5656 3.1, RFC 8709,
 * OpenSSH's PROTOCOL.u2f) read field by field, the name outside held to the name inside, nothing
 * after the last field, and the key itself handed to node:crypto, which refuses a point off its
 * curve; and here, an ed25519 key of small order or not in its canonical encoding, an RSA modulus
 * that is even or has a prime factor below 10,000, an RSA exponent that is even, below 3 or above
 * 2^32, a security key's application that does not start with `ssh:`. Taken: ed25519, ECDSA P-256/384/521, their
 * security-key (`sk-`) forms, RSA of 2048 bits or more. Refused with why: anything else.
 *
 * Hand-written rather than `sshpk`: sshpk reads neither `sk-` form (a request open upstream since 2020),
 * and a public key's wire form is a few length-prefixed fields; the cryptographic check is
 * node:crypto's.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { AppError } from '../errors';

/** A key line longer than this is no public key of a type taken here (RSA 16384 is about 2,800 characters). */
export const MAX_KEY_LINE = 8192;
const MAX_RSA_BITS = 16384;
const MIN_RSA_BITS = 2048;

export interface SshPublicKey {
  type: string;
  /** The wire form, base64, canonical. */
  data: string;
  comment: string;
  /** As `ssh-keygen -l` prints it: SHA256:… */
  fingerprint: string;
  /** What a person reads: ED25519, ECDSA P-256, RSA 4096, ED25519-SK… */
  description: string;
}

const CURVES: Record<string, { crv: string; size: number }> = {
  nistp256: { crv: 'P-256', size: 32 },
  nistp384: { crv: 'P-384', size: 48 },
  nistp521: { crv: 'P-521', size: 66 },
};

const TAKEN = [
  'ssh-ed25519',
  'sk-ssh-ed25519@openssh.com',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ecdsa-sha2-nistp256@openssh.com',
  'ssh-rsa',
];

const refuse = (why: string) => new AppError('invalid_input', `not an SSH public key Gatehouse takes: ${why}`);

/** The fields of a wire form, read in turn; each read refuses what runs past the end. */
class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  bytes(what: string): Buffer {
    if (this.at + 4 > this.buf.length) throw refuse(`the key's data ends before its ${what}`);
    const n = this.buf.readUInt32BE(this.at);
    if (n > this.buf.length - this.at - 4) throw refuse(`the key's data ends inside its ${what}`);
    const out = this.buf.subarray(this.at + 4, this.at + 4 + n);
    this.at += 4 + n;
    return out;
  }
  text(what: string): string {
    const b = this.bytes(what);
    if (!/^[\x21-\x7e]*$/.test(b.toString('latin1'))) throw refuse(`its ${what} is not text`);
    return b.toString('latin1');
  }
  /** An mpint (RFC 4251 5): positive, no needless leading zero; returned without the sign byte. */
  mpint(what: string): Buffer {
    const b = this.bytes(what);
    if (b.length === 0 || b[0] & 0x80) throw refuse(`its ${what} is not a positive number`);
    if (b[0] === 0 && (b.length === 1 || !(b[1] & 0x80))) throw refuse(`its ${what} has a needless leading zero`);
    return b[0] === 0 ? b.subarray(1) : b;
  }
  end(): void {
    if (this.at !== this.buf.length) throw refuse(`${this.buf.length - this.at} bytes follow the key's last field`);
  }
}

const b64url = (b: Buffer) => b.toString('base64url');

function checked(jwk: Record<string, string>, what: string): void {
  try {
    createPublicKey({ key: jwk, format: 'jwk' });
  } catch {
    throw refuse(`its ${what} is not a valid public key`);
  }
}

/** An EC point as OpenSSH sends it: uncompressed, 0x04 then X then Y. */
function ecPoint(r: Reader, curve: string): { crv: string; x: string; y: string } {
  const c = CURVES[curve];
  const q = r.bytes('point');
  if (q.length !== 1 + 2 * c.size || q[0] !== 4) throw refuse(`its point is not an uncompressed ${c.crv} point`);
  const jwk = { kty: 'EC', crv: c.crv, x: b64url(q.subarray(1, 1 + c.size)), y: b64url(q.subarray(1 + c.size)) };
  checked(jwk, `${c.crv} point`);
  return jwk;
}

function application(r: Reader): void {
  const app = r.text('application');
  if (app.length === 0 || app.length > 256) throw refuse('its security-key application is empty or too long');
  if (!app.startsWith('ssh:')) throw refuse(`its security-key application "${app.slice(0, 40)}" does not start with ssh: (OpenSSH takes no other)`);
}

/**
 * The ed25519 public keys of a small-order point (RFC 8032's identity, the point of order 2, two
 * of order 4, four of order 8): a signature for them can be forged without any private key, and
 * OpenSSH checks none. Little-endian y, the sign of x in the top bit.
 */
const SMALL_ORDER_ED25519 = new Set([
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
]);
const ED25519_P = 2n ** 255n - 19n;

function ed25519Key(pk: Buffer): void {
  if (SMALL_ORDER_ED25519.has(pk.toString('hex')))
    throw refuse(
      'its ed25519 key is a point of small order, for which signatures can be forged without a private key; no key made by ssh-keygen or a security key is one',
    );
  const y = BigInt('0x' + Buffer.from(pk).reverse().toString('hex')) & (2n ** 255n - 1n);
  const signed = (pk[31] & 0x80) !== 0;
  // Non-canonical: y at or past the field's prime, or a "negative" x of 0 (y = 1 or p - 1).
  if (y >= ED25519_P || (signed && (y === 1n || y === ED25519_P - 1n))) throw refuse('its ed25519 key is not in its one (canonical) encoding');
  checked({ kty: 'OKP', crv: 'Ed25519', x: b64url(pk) }, 'ed25519 key');
}

/** The odd primes below 10,000: no RSA modulus has one as a factor (its two primes are of 1024 bits or more). */
const SMALL_PRIMES: readonly bigint[] = (() => {
  const out: bigint[] = [];
  for (let n = 3; n < 10_000; n += 2) if (out.every((p) => p * p > BigInt(n) || BigInt(n) % p !== 0n)) out.push(BigInt(n));
  return out;
})();

/** Reads one key line (`type base64 [comment]`), or refuses it with why. */
export function parseSshPublicKey(raw: string): SshPublicKey {
  if (raw.length > MAX_KEY_LINE)
    throw refuse(`${raw.length} characters is too long for a public key (at most ${MAX_KEY_LINE}); is it a private key or a file of many?`);
  const lines = raw.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (lines.length === 0) throw refuse('it is empty');
  if (lines.length > 1) throw refuse(`it holds ${lines.length} lines: add one key at a time`);
  const line = lines[0].trim();
  if (/PRIVATE KEY/.test(line)) throw refuse('this is a private key: give the .pub file');
  const [type, data, ...rest] = line.split(/[ \t]+/);
  const comment = rest.join(' ');
  if (type === 'ssh-dss') throw refuse('DSA keys (ssh-dss) are too weak and OpenSSH no longer takes them: make an ed25519 key (ssh-keygen -t ed25519)');
  if (!TAKEN.includes(type)) {
    const hint = /=|"/.test(type) ? ' (options before the key, as authorized_keys may hold, are not taken)' : '';
    throw refuse(`"${type.slice(0, 40)}" is not a key type taken here${hint}; taken: ${TAKEN.join(', ')}`);
  }
  if (data === undefined || data === '') throw refuse('the key data is missing after its type');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) throw refuse('the key data is not base64');
  const blob = Buffer.from(data, 'base64');
  if (blob.toString('base64') !== data) throw refuse('the key data is not base64 in its one form');
  if (comment.length > 200) throw refuse('its comment is longer than 200 characters');
  if (/[\p{Cc}\p{Cf}]/u.test(comment)) throw refuse('its comment holds control or invisible characters');
  const r = new Reader(blob);
  const inner = r.text('type');
  if (!TAKEN.includes(inner) && inner !== 'ssh-dss')
    throw refuse(`its data is not an SSH public key (it does not start with a key type, it starts with "${inner.slice(0, 20)}")`);
  if (inner !== type) throw refuse(`the line says ${type} but the key data is a ${inner} key`);
  let description: string;
  if (type === 'ssh-ed25519' || type === 'sk-ssh-ed25519@openssh.com') {
    const pk = r.bytes('public key');
    if (pk.length !== 32) throw refuse(`its ed25519 key is ${pk.length} bytes, not 32`);
    ed25519Key(pk);
    if (type.startsWith('sk-')) application(r);
    description = type.startsWith('sk-') ? 'ED25519-SK' : 'ED25519';
  } else if (type.startsWith('ecdsa-sha2-') || type.startsWith('sk-ecdsa-sha2-')) {
    const named = type.startsWith('sk-') ? 'nistp256' : type.slice('ecdsa-sha2-'.length);
    const curve = r.text('curve');
    if (curve !== named) throw refuse(`the line says curve ${named} but the key data names ${curve.slice(0, 20)}`);
    const { crv } = ecPoint(r, curve);
    if (type.startsWith('sk-')) application(r);
    description = `ECDSA${type.startsWith('sk-') ? '-SK' : ''} ${crv}`;
  } else {
    const e = r.mpint('exponent');
    const n = r.mpint('modulus');
    const bits = n.length * 8 - Math.clz32(n[0]) + 24;
    if (bits < MIN_RSA_BITS)
      throw refuse(`an RSA key of ${bits} bits is too weak (at least ${MIN_RSA_BITS}): make an ed25519 key, or RSA of 3072 bits or more`);
    if (bits > MAX_RSA_BITS) throw refuse(`an RSA key of ${bits} bits is larger than OpenSSH takes (at most ${MAX_RSA_BITS})`);
    if (!(e[e.length - 1] & 1) || (e.length === 1 && e[0] < 3) || e.length > 4)
      throw refuse('its RSA exponent is not an odd number from 3 to 2^32 (ssh-keygen makes 65537)');
    if (!(n[n.length - 1] & 1)) throw refuse('its RSA modulus is even, so no product of two large primes');
    const modulus = BigInt('0x' + n.toString('hex'));
    const factor = SMALL_PRIMES.find((p) => modulus % p === 0n);
    if (factor !== undefined) throw refuse(`its RSA modulus is divisible by ${factor}, so no product of two large primes`);
    checked({ kty: 'RSA', n: b64url(n), e: b64url(e) }, 'RSA key');
    description = `RSA ${bits}`;
  }
  r.end();
  const fingerprint = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return { type, data, comment, fingerprint, description };
}
