/** Error code → process exit code (the exit codes docs/cli.md documents): every code chosen here, or it does not compile. */
import type { ErrorCode } from '../errors';

export const EXIT = { ok: 0, failure: 1, usage: 2, refused: 3, notFound: 4, unavailable: 5, badStore: 6 } as const;

export const EXIT_CODE: Readonly<Record<ErrorCode, number>> = {
  invalid_input: EXIT.usage,
  password_mismatch: EXIT.usage,
  password_too_short: EXIT.usage,
  password_too_long: EXIT.usage,
  password_too_common: EXIT.usage,
  token_invalid: EXIT.usage,
  token_expired: EXIT.usage,
  body_too_large: EXIT.usage,
  unsupported_media_type: EXIT.usage,
  id_mismatch: EXIT.usage,
  method_not_allowed: EXIT.usage,
  forbidden: EXIT.refused,
  signup_closed: EXIT.refused,
  email_taken: EXIT.refused,
  name_taken: EXIT.refused,
  conflict: EXIT.refused,
  precondition_failed: EXIT.refused,
  last_administrator: EXIT.refused,
  last_credential: EXIT.refused,
  reauthentication_required: EXIT.refused,
  passkey_invalid: EXIT.refused,
  invalid_credentials: EXIT.refused,
  email_unverified: EXIT.refused,
  unauthenticated: EXIT.refused,
  invalid_token: EXIT.refused,
  otp_required: EXIT.refused,
  otp_invalid: EXIT.refused,
  not_found: EXIT.notFound,
  unavailable: EXIT.unavailable,
  rate_limited: EXIT.unavailable,
  bad_store: EXIT.badStore,
  internal: EXIT.failure,
};

/** A command that ends with its own exit code, having said what it had to (`config plan`: 2 when something would change). */
export class ExitWith extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
