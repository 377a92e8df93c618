/**
 * Password hashing: bcrypt off the event loop, on worker threads that yield to the rest of the
 * server (hash-workers.ts), imported argon2id hashes verified too (@node-rs/argon2), and the
 * sha512-crypt and PBKDF2 hashes an import brings (imported-hashes.ts). At most
 * `concurrency` hashes run at once, in FIFO order, so a signin burst queues instead of taking
 * every core.
 */
import { timingSafeEqual } from 'node:crypto';
import { HashWorkers } from './hash-workers';
import { Semaphore } from './semaphore';
import { checkImportedHash, parsePbkdf2, verifyPbkdf2 } from './imported-hashes';
import { parseShaCrypt, shaCrypt512 } from './sha-crypt';

export const MAX_PASSWORD_BYTES = 72;
/** 22 characters of salt and 31 of hash, in bcrypt's alphabet. */
const DUMMY_SALT_AND_HASH = 'GatehouseDummySalt.abc' + 'NoPasswordEverHashesToThis.abcd';

export interface VerifyResult {
  ok: boolean;
  /** The hash is argon2 or uses another bcrypt cost: re-hash after a successful signin. */
  needsRehash: boolean;
}

export class PasswordHasher {
  private readonly gate: Semaphore;
  /**
   * Imported hashes (argon2, sha512-crypt, PBKDF2) are checked one at a time, beside bcrypt's gate:
   * however many such checks a stranger sets off, one core at most does them, and sign-ins with
   * Gatehouse's own hashes do not wait behind them.
   */
  private readonly importedGate = new Semaphore(1);
  private readonly workers: HashWorkers;
  private readonly dummy: string;

  constructor(
    private readonly cost: number,
    concurrency: number,
  ) {
    this.gate = new Semaphore(concurrency);
    this.workers = new HashWorkers(concurrency);
    this.dummy = `$2b$${String(cost).padStart(2, '0')}$${DUMMY_SALT_AND_HASH}`;
  }

  /** Passwords are hashed NFC-normalized: "é" typed as one code point or as e + accent is one password. */
  hash(password: string): Promise<string> {
    const job = { op: 'hash', password: password.normalize('NFC'), cost: this.cost } as const;
    return this.gate.run(() => this.workers.run(job) as Promise<string>);
  }

  async verify(password: string, stored: string): Promise<VerifyResult> {
    const nfc = password.normalize('NFC');
    const result = await this.verifyExactly(nfc, stored);
    // A hash made before normalization, from other bytes: tried as typed too (a signin then re-hashes it).
    if (result.ok || nfc === password) return result;
    const raw = await this.verifyExactly(password, stored);
    return raw.ok ? { ok: true, needsRehash: true } : result;
  }

  private async verifyExactly(password: string, stored: string): Promise<VerifyResult> {
    // A password bcrypt would truncate can never be the stored one (we refuse them at set
    // time); still pay the same work so the answer takes as long as any other failure.
    const tooLong = Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
    if (stored.startsWith('$argon2')) {
      // Loaded on first use: only accounts imported with argon2id hashes need it.
      const argon2 = await import('@node-rs/argon2');
      // A malformed imported hash verifies nothing: a wrong password, not a 500.
      const ok = checkImportedHash(stored).ok && (await this.importedGate.run(() => argon2.verify(stored, password).catch(() => false))); // reason: a malformed stored hash matches no password
      return { ok: ok && !tooLong, needsRehash: true };
    }
    if (stored.startsWith('$6$') || stored.startsWith('$pbkdf2')) {
      // Imported (sha512-crypt from Authelia or /etc/shadow, PBKDF2 from Keycloak): checked within
      // the import's ceilings again, so a hash that slipped in another way cannot run for ever.
      if (checkImportedHash(stored).ok) {
        const ok = await this.importedGate.run(() => verifyImported(password, stored));
        return { ok: ok && !tooLong, needsRehash: true };
      }
    }
    const candidate = tooLong ? password.slice(0, 1) : password;
    if (!/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(stored)) {
      // No password at all (a passkey-only account stores ''), or no hash we know: the same
      // bcrypt work as a wrong password and the same answer, so neither tells the account apart.
      await this.gate.run(() => this.workers.run({ op: 'compare', password: candidate, hash: this.dummy }));
      return { ok: false, needsRehash: false };
    }
    const ok = await this.gate.run(() => this.workers.run({ op: 'compare', password: candidate, hash: stored }) as Promise<boolean>);
    // The cost is the two digits after $2b$ (the pattern above has checked them).
    return { ok: ok === true && !tooLong, needsRehash: Number(stored.slice(4, 6)) !== this.cost };
  }

  /**
   * The same bcrypt work as a real check, for unknown emails: their answer must not come
   * back faster than a wrong password's (PocketBase's dummyPasswordCheck does the same).
   * The dummy is a well-formed hash at the server's cost that no password matches: bcrypt does
   * all of its work on it, and nothing has to be hashed at start-up to have one.
   */
  async dummyVerify(password: string): Promise<void> {
    await this.verify(password, this.dummy);
  }

  get queued(): number {
    return this.gate.queued;
  }

  get running(): number {
    return this.gate.running;
  }

  /** Hashes and checks done since start (every refusal of a sign-in pays one: the metrics show it). */
  get done(): number {
    return this.gate.done;
  }

  /** Ends the hashing workers (a hash still running is rejected). */
  close(): Promise<void> {
    return this.workers.close();
  }
}

/** sha512-crypt or PBKDF2, already checked by checkImportedHash. */
async function verifyImported(password: string, stored: string): Promise<boolean> {
  const pbkdf2 = parsePbkdf2(stored);
  if (pbkdf2) return verifyPbkdf2(password, pbkdf2);
  const sha = parseShaCrypt(stored);
  if (!sha) return false;
  const made = Buffer.from(await shaCrypt512(password, sha));
  const want = Buffer.from(stored);
  // Prevent any possibility of a timing attack by using a constant-time comparison.
  return made.length === want.length && timingSafeEqual(made, want);
}
