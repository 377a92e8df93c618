/**
 * Rate limits and lockouts (CONTRACT §3 Limits). Failed signins are counted per email and client
 * address (so a hostile address cannot lock the owner out from another one), per email across
 * all addresses (a higher ceiling that bounds distributed guessing), and per client address; an
 * unknown email locks exactly like a known one, so the answer never tells them apart; TOTP failures per account; reset requests per account. Per-address limits can
 * be turned off (--no-rate-limits); per-account ones always apply.
 */
import { AppError } from '../errors';
import type { Config } from '../config';
import type { Clock } from '../clock';
import type { Tx } from '../store/connection';
import { clear, clearPrefix, Count, hit, peek } from '../store/counters';

export const keys = {
  /** Failures for an account from one client address: what locks that pair. */
  signinPair: (emailKey: string, address: string) => `signin_pair:${emailKey}|${address}`,
  /** Failures for an account from every address: the higher ceiling that locks it everywhere. */
  signinEmail: (emailKey: string) => `signin_email:${emailKey}`,
  signinAddress: (address: string) => `signin_addr:${address}`,
  signupAddress: (address: string) => `signup_addr:${address}`,
  totpAccount: (referenceId: string) => `totp_account:${referenceId}`,
  resetAccount: (referenceId: string) => `reset_account:${referenceId}`,
};

function limited(count: Count, windowMs: number, now: number, what: string): AppError {
  const retryAfter = Math.max(1, Math.ceil((count.windowStart + windowMs - now) / 1000));
  return new AppError('rate_limited', `too many ${what}; try again in ${retryAfter} s`, { retryAfter });
}

export class Limiter {
  private readonly windowMs: number;

  constructor(
    private readonly db: Tx,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {
    this.windowMs = config.limits.windowSeconds * 1000;
  }

  /** Refuses before any password work when the email or the address is locked out. */
  async assertSigninAllowed(emailKey: string | null, address: string): Promise<void> {
    const { limits } = this.config;
    if (this.config.rateLimits) {
      const byAddress = await peek(this.db, keys.signinAddress(address), this.windowMs);
      if (byAddress.hits >= limits.signinFailuresPerAddress) throw limited(byAddress, this.windowMs, this.clock.now(), 'failed signins from this address');
    }
    if (emailKey !== null) {
      const [pair, total] = await Promise.all([
        peek(this.db, keys.signinPair(emailKey, address), this.windowMs),
        peek(this.db, keys.signinEmail(emailKey), this.windowMs),
      ]);
      if (pair.hits >= limits.signinFailuresPerAccount)
        throw limited(pair, this.windowMs, this.clock.now(), 'failed signins for this account from this address');
      if (total.hits >= limits.signinFailuresPerAccountTotal) throw limited(total, this.windowMs, this.clock.now(), 'failed signins for this account');
    }
  }

  /**
   * Counts a failed signin per address, per account and address, and per account; returns
   * what this failure locked, if anything (the pair, or the account everywhere).
   */
  async signinFailed(emailKey: string | null, address: string): Promise<'pair' | 'account' | null> {
    if (this.config.rateLimits) await hit(this.db, keys.signinAddress(address), this.windowMs);
    if (emailKey === null) return null;
    const [pair, total] = await Promise.all([
      hit(this.db, keys.signinPair(emailKey, address), this.windowMs),
      hit(this.db, keys.signinEmail(emailKey), this.windowMs),
    ]);
    if (total.hits === this.config.limits.signinFailuresPerAccountTotal) return 'account';
    return pair.hits === this.config.limits.signinFailuresPerAccount ? 'pair' : null;
  }

  /** The right password from this address: its pair starts over (the account-wide count does not). */
  async signinSucceeded(emailKey: string, address: string): Promise<void> {
    await clear(this.db, [keys.signinPair(emailKey, address)]);
  }

  /** A new password (reset): every failure counted against the old one is cleared. */
  async passwordReplaced(emailKey: string): Promise<void> {
    await clear(this.db, [keys.signinEmail(emailKey)]);
    await clearPrefix(this.db, keys.signinPair(emailKey, ''));
  }

  async signupAttempt(address: string): Promise<void> {
    if (!this.config.rateLimits) return;
    const count = await hit(this.db, keys.signupAddress(address), this.windowMs);
    if (count.hits > this.config.limits.signupsPerAddress) throw limited(count, this.windowMs, this.clock.now(), 'signups from this address');
  }

  async assertTotpAllowed(referenceId: string): Promise<void> {
    const count = await peek(this.db, keys.totpAccount(referenceId), this.windowMs);
    if (count.hits >= this.config.limits.totpFailuresPerAccount) throw limited(count, this.windowMs, this.clock.now(), 'failed codes for this account');
  }

  /** Returns true when this failure locked the second factor. */
  async totpFailed(referenceId: string): Promise<boolean> {
    const count = await hit(this.db, keys.totpAccount(referenceId), this.windowMs);
    return count.hits === this.config.limits.totpFailuresPerAccount;
  }

  /** Counts a reset request; false when the account is over its limit (the request is dropped). */
  async resetRequest(referenceId: string): Promise<boolean> {
    const count = await hit(this.db, keys.resetAccount(referenceId), this.config.limits.resetWindowSeconds * 1000);
    return count.hits <= this.config.limits.resetRequestsPerAccount;
  }

  /**
   * Clears an account's failure counts and so its lockouts (gatehouse user unlock): from every
   * address, everywhere, and on the second factor. True when there was anything to clear.
   */
  async unlock(emailKey: string, referenceId: string): Promise<boolean> {
    const cleared = await clear(this.db, [keys.signinEmail(emailKey), keys.totpAccount(referenceId)]);
    return cleared + (await clearPrefix(this.db, keys.signinPair(emailKey, ''))) > 0;
  }

  /** Clears the second factor's failure count (after TOTP is turned off). */
  clearTotp(referenceId: string): Promise<number> {
    return clear(this.db, [keys.totpAccount(referenceId)]);
  }
}
