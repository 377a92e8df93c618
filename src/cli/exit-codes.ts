/** Error code → process exit code (CONTRACT §4). */
import type { ErrorCode } from '../errors';

export const EXIT = { ok: 0, failure: 1, usage: 2, refused: 3, notFound: 4, unavailable: 5 } as const;

export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case 'invalid_input':
    case 'password_mismatch':
    case 'password_too_short':
    case 'password_too_long':
    case 'password_too_common':
    case 'token_invalid':
    case 'token_expired':
      return EXIT.usage;
    case 'forbidden':
    case 'signup_closed':
    case 'email_taken':
    case 'invalid_credentials':
    case 'email_unverified':
      return EXIT.refused;
    case 'not_found':
      return EXIT.notFound;
    case 'unavailable':
    case 'rate_limited':
      return EXIT.unavailable;
    default:
      return EXIT.failure;
  }
}
