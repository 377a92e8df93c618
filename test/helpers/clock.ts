/** A clock tests move by hand: the core reads it for every expiry, window, token and TOTP step. */
import type { Clock } from '../../src/clock';

export interface ManualClock extends Clock {
  advance(ms: number): void;
  set(epochMs: number): void;
}

export function manualClock(start = Date.now()): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => void (now += ms),
    set: (epochMs) => void (now = epochMs),
  };
}
