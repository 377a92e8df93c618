/**
 * Rate limits and lockouts (the contract's Limits). Failed signins are counted per email and
 * client address (a hostile address cannot lock the owner out from another one), per email across
 * all addresses, and per client address. IPv6 addresses count by their /64 (one host commonly
 * holds the whole prefix). An unknown email locks exactly like a known one, so the answer never
 * tells them apart. TOTP failures are counted per account; reset requests per account.
 * Per-address limits can be turned off (--no-rate-limits); per-account ones always apply.
 *
 * Past the account-wide ceiling there is no hard lock (which let anyone lock the owner out
 * everywhere with 100 failures from 10 addresses). Instead, as NIST SP 800-63B 5.2.2 and
 * Keycloak's brute-force detection do: each further attempt from an unfamiliar address waits a
 * delay that doubles with every failure (1 s, 2 s, 4 s … at most the window), the owner is mailed
 * a link that lifts it, and an address the account signed in from successfully in the last 90
 * days, or a browser that did (the pages' device cookie), is not held back at all (its own
 * per-pair limit still applies). The trade-off: a guesser
 * on an address the owner used (a shared network) is bounded by the pair limit only.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../errors';
import type { Config } from '../config';
import type { Clock } from '../clock';
import type { Tx } from '../store/connection';
import { clear, clearPrefix, Count, failuresAndKnown, giveBack, hit, knownSignin, peek, peekMany, rememberSignin, take } from '../store/counters';

/** A second-factor attempt taken from an account's limit: its count after it, and its window. */
export interface TotpAttempt extends Count {
  readonly referenceId: string;
}

/** How long a successful signin keeps its address familiar. */
export const KNOWN_SIGNIN_MS = 90 * 24 * 60 * 60 * 1000;

/** A browser's device cookie as it is kept (a hash: the store never holds the cookie itself). */
const deviceKey = (device: string) => `device:${createHash('sha256').update(device).digest('base64url')}`;

/** The unit addresses are counted in: an IPv4 address, or an IPv6 address's /64. */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!address.includes(':')) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** A familiar place's "last signed in" is kept to the minute. */
const REMEMBER_EVERY_MS = 60_000;

export const keys = {
  /** Failures for an account from one client address: what locks that pair. */
  signinPair: (emailKey: string, address: string) => `signin_pair:${emailKey}|${address}`,
  /** Failures for an account from every address: the higher ceiling that locks it everywhere. */
  signinEmail: (emailKey: string) => `signin_email:${emailKey}`,
  /** The time of the account's latest failure (its window_start), for the growing delay. */
  signinLast: (emailKey: string) => `signin_last:${emailKey}`,
  signinAddress: (address: string) => `signin_addr:${address}`,
  signupAddress: (address: string) => `signup_addr:${address}`,
  /** Wrong device-flow user codes entered from one address. */
  deviceCodeAddress: (address: string) => `device_code_addr:${address}`,
  samlAddress: (address: string) => `saml_addr:${address}`,
  totpAccount: (referenceId: string) => `totp_account:${referenceId}`,
  resetAccount: (referenceId: string) => `reset_account:${referenceId}`,
  /** Mailed sign-in codes asked from one address, for one typed address, mailed to one account. */
  mailCodeAddress: (address: string) => `mail_code_addr:${address}`,
  mailCodeEmail: (emailKey: string) => `mail_code_email:${emailKey}`,
  mailCodeAccount: (referenceId: string) => `mail_code_account:${referenceId}`,
};

/** Codes asked by mail: per client address, and per typed address (whether or not it has an account), in --limit-window. */
export const MAIL_CODES_PER_ADDRESS = 20;
export const MAIL_CODES_PER_EMAIL = 5;
/** Codes mailed to one account in an hour: past it, none is sent (the answer does not change). */
export const MAIL_CODES_PER_ACCOUNT = 5;
const MAIL_CODE_ACCOUNT_WINDOW_MS = 3600_000;

function limited(count: Count, windowMs: number, now: number, what: string): AppError {
  const retryAfter = Math.max(1, Math.ceil((count.windowStart + windowMs - now) / 1000));
  return new AppError('rate_limited', `too many ${what}; try again in ${retryAfter} s`, { retryAfter });
}

/**
 * Who a limit counts (an Actor or a Caller): its address (the shell is one address of its own,
 * "shell") and the browser's device cookie, if any.
 */
export interface Counted {
  readonly client: string | null;
  readonly device?: string | null;
}

const addressOf = (who: Counted): string => who.client ?? 'shell';

export class Limiter {
  private readonly windowMs: number;

  constructor(
    private readonly db: Tx,
    private readonly config: Config,
    private readonly clock: Clock,
  ) {
    this.windowMs = config.limitWindow * 1000;
  }

  /** Refuses before any password work when the email or the address is locked out. */
  async assertSigninAllowed(emailKey: string | null, who: Counted): Promise<void> {
    const limits = this.config;
    const group = addressGroup(addressOf(who));
    const device = who.device ?? null;
    // Every counter in one read: the address's, then the account's (pair, total, latest).
    const asked = [
      ...(this.config.rateLimits ? [keys.signinAddress(group)] : []),
      ...(emailKey === null ? [] : [keys.signinPair(emailKey, group), keys.signinEmail(emailKey), keys.signinLast(emailKey)]),
    ];
    if (asked.length === 0) return;
    const counts = await peekMany(this.db, asked, this.windowMs);
    if (this.config.rateLimits) {
      const byAddress = counts.shift()!;
      if (byAddress.hits >= limits.signinFailuresPerAddress) throw limited(byAddress, this.windowMs, this.clock.now(), 'failed signins from this address');
    }
    if (emailKey === null) return;
    const [pair, total, last] = counts;
    if (pair.hits >= limits.signinFailuresPerAccount) throw limited(pair, this.windowMs, this.clock.now(), 'failed signins for this account from this address');
    if (total.hits < limits.signinFailuresPerAccountTotal) return;
    // Past the ceiling: a growing delay since the latest failure, except where the owner signed in before.
    const waitUntil = last.windowStart + this.delayMs(total.hits);
    const now = this.clock.now();
    if (now >= waitUntil) return;
    const places = [group, ...(device ? [deviceKey(device)] : [])];
    if ((await Promise.all(places.map((p) => knownSignin(this.db, emailKey, p, KNOWN_SIGNIN_MS)))).some(Boolean)) return;
    const retryAfter = Math.max(1, Math.ceil((waitUntil - now) / 1000));
    throw new AppError('rate_limited', `too many failed signins for this account; try again in ${retryAfter} s, or use the link mailed to its owner`, {
      retryAfter,
    });
  }

  /** 1 s at the ceiling, doubling with each failure past it, at most the window. */
  private delayMs(hits: number): number {
    const past = hits - this.config.signinFailuresPerAccountTotal;
    return Math.min(1000 * 2 ** Math.min(past, 30), this.windowMs);
  }

  /**
   * Counts a failed signin per address, per account and address, and per account; returns what
   * this failure started, if anything (the pair's lock, or the account's growing delay).
   */
  async signinFailed(emailKey: string | null, who: Counted): Promise<'pair' | 'account' | null> {
    const group = addressGroup(addressOf(who));
    if (this.config.rateLimits) await hit(this.db, keys.signinAddress(group), this.windowMs);
    if (emailKey === null) return null;
    const [pair, total] = await Promise.all([
      hit(this.db, keys.signinPair(emailKey, group), this.windowMs),
      hit(this.db, keys.signinEmail(emailKey), this.windowMs),
      hit(this.db, keys.signinLast(emailKey), 0),
    ]);
    if (total.hits === this.config.signinFailuresPerAccountTotal) return 'account';
    return pair.hits === this.config.signinFailuresPerAccount ? 'pair' : null;
  }

  /** The right password from this address: its pair starts over, and the address becomes familiar. */
  async signinSucceeded(emailKey: string, who: Counted): Promise<void> {
    const group = addressGroup(addressOf(who));
    const device = who.device ?? null;
    const pair = keys.signinPair(emailKey, group);
    // Read first (one statement), write only what changes: an LDAP app binds on every login, often from one address.
    const { failures, known } = await failuresAndKnown(this.db, pair, this.windowMs, emailKey, group, REMEMBER_EVERY_MS);
    await Promise.all([
      ...(failures ? [clear(this.db, [pair])] : []),
      ...(known ? [] : [rememberSignin(this.db, emailKey, group)]),
      ...(device ? [rememberSignin(this.db, emailKey, deviceKey(device))] : []),
    ]);
  }

  /** A new password (reset), or the owner's unlock link: every failure counted so far is cleared. */
  async passwordReplaced(emailKey: string): Promise<void> {
    await clear(this.db, [keys.signinEmail(emailKey), keys.signinLast(emailKey)]);
    await clearPrefix(this.db, keys.signinPair(emailKey, ''));
  }

  /** The owner proved the mailbox from this address (the unlock link): it becomes familiar. */
  async rememberAddress(emailKey: string, address: string): Promise<void> {
    await rememberSignin(this.db, emailKey, addressGroup(address));
  }

  async signupAttempt(who: Counted): Promise<void> {
    if (!this.config.rateLimits) return;
    const count = await hit(this.db, keys.signupAddress(addressOf(who)), this.windowMs);
    if (count.hits > this.config.signupsPerAddress) throw limited(count, this.windowMs, this.clock.now(), 'signups from this address');
  }

  /**
   * Before a device-flow user code is looked up: an address that entered too many wrong codes
   * waits (the same ceiling as failed signins per address; a code has 20^8 values and lives 10
   * minutes, so guessing one needs far more tries than the ceiling lets through).
   */
  async assertCodeEntryAllowed(who: Counted): Promise<void> {
    if (!this.config.rateLimits) return;
    const count = await peek(this.db, keys.deviceCodeAddress(addressGroup(addressOf(who))), this.windowMs);
    if (count.hits >= this.config.signinFailuresPerAddress) throw limited(count, this.windowMs, this.clock.now(), 'wrong codes from this address');
  }

  async codeEntryFailed(who: Counted): Promise<void> {
    if (this.config.rateLimits) await hit(this.db, keys.deviceCodeAddress(addressGroup(addressOf(who))), this.windowMs);
  }

  /** A SAML AuthnRequest from this address (each keeps a row for its lifetime): at most so many per window. */
  async samlRequest(who: Counted): Promise<void> {
    if (!this.config.rateLimits) return;
    const count = await hit(this.db, keys.samlAddress(addressGroup(addressOf(who))), this.windowMs);
    if (count.hits > this.config.samlRequestsPerAddress) throw limited(count, this.windowMs, this.clock.now(), 'SAML sign-in requests from this address');
  }

  /**
   * A request for a mailed sign-in code: counted from this address and for the typed address (an
   * address with no account counts alike, so the refusal says nothing of who exists). Refused
   * past either limit; the per-address one is off with --no-rate-limits, the other never.
   */
  async mailCodeRequest(emailKey: string, who: Counted): Promise<void> {
    if (this.config.rateLimits) {
      const byAddress = await hit(this.db, keys.mailCodeAddress(addressGroup(addressOf(who))), this.windowMs);
      if (byAddress.hits > MAIL_CODES_PER_ADDRESS) throw limited(byAddress, this.windowMs, this.clock.now(), 'codes asked from this address');
    }
    const byEmail = await hit(this.db, keys.mailCodeEmail(emailKey), this.windowMs);
    if (byEmail.hits > MAIL_CODES_PER_EMAIL) throw limited(byEmail, this.windowMs, this.clock.now(), 'codes asked for this email address');
  }

  /** A code about to be mailed to an account; false past its hourly limit (then none is sent). */
  async mailCodeForAccount(referenceId: string): Promise<boolean> {
    const count = await hit(this.db, keys.mailCodeAccount(referenceId), MAIL_CODE_ACCOUNT_WINDOW_MS);
    return count.hits <= MAIL_CODES_PER_ACCOUNT;
  }

  /**
   * Takes one of the account's second-factor attempts BEFORE a code is checked, by one conditional
   * write (failures per account per window): past the limit it is refused, a right code too, and
   * requests sent at once never get more than the limit checked. A right code gives its attempt
   * back (totpSucceeded): only failures count, as before.
   */
  async takeTotpAttempt(referenceId: string): Promise<TotpAttempt> {
    const key = keys.totpAccount(referenceId);
    const taken = await take(this.db, key, this.windowMs, this.config.totpFailuresPerAccount);
    if (taken === null) throw limited(await peek(this.db, key, this.windowMs), this.windowMs, this.clock.now(), 'failed codes for this account');
    return { referenceId, ...taken };
  }

  /** The attempt's code was right: the attempt is given back. */
  async totpSucceeded(attempt: TotpAttempt): Promise<void> {
    await giveBack(this.db, keys.totpAccount(attempt.referenceId), attempt.windowStart);
  }

  /** The attempt's code was wrong (it stays counted); true when it was the one that locked the second factor. */
  totpFailed(attempt: TotpAttempt): boolean {
    return attempt.hits === this.config.totpFailuresPerAccount;
  }

  /** Counts a reset request; false when the account is over its limit (the request is dropped). */
  async resetRequest(referenceId: string): Promise<boolean> {
    const count = await hit(this.db, keys.resetAccount(referenceId), this.config.resetWindow * 1000);
    return count.hits <= this.config.resetRequestsPerAccount;
  }

  /**
   * Clears an account's failure counts and so its lockouts (gatehouse user unlock): from every
   * address, everywhere, and on the second factor. True when there was anything to clear.
   */
  async unlock(emailKey: string, referenceId: string): Promise<boolean> {
    const cleared = await clear(this.db, [keys.signinEmail(emailKey), keys.signinLast(emailKey), keys.totpAccount(referenceId)]);
    return cleared + (await clearPrefix(this.db, keys.signinPair(emailKey, ''))) > 0;
  }

  /** Clears the second factor's failure count (after TOTP is turned off). */
  clearTotp(referenceId: string): Promise<number> {
    return clear(this.db, [keys.totpAccount(referenceId)]);
  }
}
