/** A clock tests move by hand: the core reads it for every expiry, window, token and TOTP step. */
import { generate } from 'otplib';
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

/**
 * The TOTP code for a secret at a clock's time, as an authenticator app computes it. Tests that
 * turn TOTP on hold the server's clock still and move it one step (30 s) before the next code:
 * the code that turned TOTP on may not be used twice, and no test waits for the wall clock.
 */
export const totpAt = (secret: string, clock: Clock) => generate({ secret, epoch: Math.floor(clock.now() / 1000) });
