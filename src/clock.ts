/**
 * Time, injectable: every expiry, window, token time and TOTP step in the core reads `now()`
 * from the clock the core was opened with, so tests move time instead of sleeping.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
