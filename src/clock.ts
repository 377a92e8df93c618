/**
 * Time, injectable: every expiry, window, token time and TOTP step in the core reads `now()`
 * from the clock the core was opened with, so tests move time instead of sleeping.
 */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Epoch milliseconds as the ISO 8601 string every view shows; null (never happened) stays null.
 * One helper so every view formats time the same way.
 */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
