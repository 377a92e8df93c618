/**
 * Password hashing: bcrypt off the event loop (the native `bcrypt` package runs on libuv's
 * pool), imported argon2id hashes verified too (@node-rs/argon2). At most `concurrency` hashes run at once so database reads,
 * which share the same thread pool, keep flowing during a signin burst.
 */
import bcrypt from 'bcrypt';
import * as argon2 from '@node-rs/argon2';
import { Semaphore } from './semaphore';

export const MAX_PASSWORD_BYTES = 72;

export interface VerifyResult {
  ok: boolean;
  /** The hash is argon2 or uses another bcrypt cost: re-hash after a successful signin. */
  needsRehash: boolean;
}

export class PasswordHasher {
  private readonly gate: Semaphore;
  private dummy: Promise<string> | null = null;

  constructor(
    private readonly cost: number,
    concurrency: number,
  ) {
    this.gate = new Semaphore(concurrency);
  }

  /** Passwords are hashed NFC-normalized: "é" typed as one code point or as e + accent is one password. */
  hash(password: string): Promise<string> {
    return this.gate.run(() => bcrypt.hash(password.normalize('NFC'), this.cost));
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
      const ok = await this.gate.run(() => argon2.verify(stored, password).catch(() => false));
      return { ok: ok && !tooLong, needsRehash: true };
    }
    const candidate = tooLong ? password.slice(0, 1) : password;
    if (!/^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$/.test(stored)) return { ok: false, needsRehash: false };
    const ok = await this.gate.run(() => bcrypt.compare(candidate, stored));
    return { ok: ok && !tooLong, needsRehash: bcrypt.getRounds(stored) !== this.cost };
  }

  /**
   * The same bcrypt work as a real check, for unknown emails: their answer must not come
   * back faster than a wrong password's (PocketBase's dummyPasswordCheck does the same).
   */
  async dummyVerify(password: string): Promise<void> {
    this.dummy ??= bcrypt.hash('gatehouse-dummy-password', this.cost);
    const stored = await this.dummy;
    await this.verify(password, stored);
  }

  /** Start computing the dummy hash now, so the first unknown-email signin is not faster. */
  warmUp(): Promise<void> {
    this.dummy ??= bcrypt.hash('gatehouse-dummy-password', this.cost);
    return this.dummy.then(() => undefined);
  }

  get queued(): number {
    return this.gate.queued;
  }

  get running(): number {
    return this.gate.running;
  }
}
