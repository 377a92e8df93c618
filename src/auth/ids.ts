/** Random ids that an operator types on the command line. */
import { randomBytes } from 'node:crypto';

/**
 * `bytes` random bytes as base64url, never starting with '-' or '_': an id that begins with a
 * dash reads as an option on the command line (`gatehouse keys retire -Xy…`), one id in 64
 * otherwise. The same randomness, less a sixty-fourth of one character's choices.
 */
export function newShellSafeId(bytes: number): string {
  for (;;) {
    const id = randomBytes(bytes).toString('base64url');
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}
