/**
 * The catalogue of stable error codes. Domain code throws AppError with one of these codes and
 * never knows HTTP statuses or exit codes: http/errors.ts and cli/exit-codes.ts map them.
 */
export const ERROR_CODES = {
  invalid_input: 400,
  password_mismatch: 400,
  password_too_short: 400,
  password_too_long: 400,
  password_too_common: 400,
  invalid_credentials: 401,
  unauthenticated: 401,
  invalid_token: 401,
  otp_required: 401,
  otp_invalid: 401,
  token_invalid: 400,
  token_expired: 400,
  forbidden: 403,
  signup_closed: 403,
  email_unverified: 403,
  not_found: 404,
  email_taken: 409,
  id_mismatch: 409,
  body_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Seconds a client should wait (rate_limited, unavailable). */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryAfter = options.retryAfter;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** A refusal: guests are told to authenticate, signed-in callers that they may not. */
export function denied(isGuest: boolean, what: string): AppError {
  return isGuest
    ? new AppError('unauthenticated', `sign in to ${what}`)
    : new AppError('forbidden', `you may not ${what}`);
}
