/**
 * The catalogue of stable error codes. Domain code throws AppError with one of these codes and
 * never knows HTTP statuses or exit codes: http/errors.ts and cli/exit-codes.ts each map every
 * code (an exhaustive Record, so a new code does not compile until both front ends chose).
 */
export const ERROR_CODES = [
  'invalid_input',
  'password_mismatch',
  'password_too_short',
  'password_too_long',
  'password_too_common',
  'invalid_credentials',
  'unauthenticated',
  'invalid_token',
  'otp_required',
  'otp_invalid',
  /**
   * A change that adds a way in needs a sign-in within --recent-signin, or the password, a code or
   * a passkey entered again in this session (the reauthenticate action).
   */
  'reauthentication_required',
  /** A passkey ceremony that does not verify (wrong origin, signature, challenge, a cloned key). */
  'passkey_invalid',
  'token_invalid',
  'token_expired',
  'forbidden',
  'signup_closed',
  'email_unverified',
  'not_found',
  'email_taken',
  'name_taken',
  /** The operation would overwrite or disturb something: a file that exists, a store in use. */
  'conflict',
  'last_administrator',
  /** The account's last way to sign in (its only passkey with no password, its only linked identity). */
  'last_credential',
  'id_mismatch',
  /** An If-Match naming a version the resource no longer has (SCIM). */
  'precondition_failed',
  'method_not_allowed',
  'body_too_large',
  'unsupported_media_type',
  'rate_limited',
  /** The store is not one this executable may open: not SQLite, another program's, or a newer Gatehouse's. */
  'bad_store',
  'internal',
  'unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A setting or argument named in a message is written `{--name}`: each front end words it. The
 * shell shows it as a flag (dashes before the name); HTTP, the pages and the logs show the field (`name`, dashes as
 * spaces); the console shows its form's label (`“Redirect URIs”`) where it has one. Domain code
 * so never names a CLI flag to a person in a browser.
 */
const FIELD = /\{--([a-z][a-z-]*)\}/g;
export type Front = 'cli' | 'text';
export const worded = (template: string, front: Front, labels: Readonly<Record<string, string>> = {}): string =>
  template.replace(FIELD, (_m, name: string) => (front === 'cli' ? `--${name}` : labels[name] ? `“${labels[name]}”` : name.replace(/-/g, ' ')));

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Seconds a client should wait (rate_limited, unavailable). */
  readonly retryAfter?: number;
  /** The message with its `{--field}` marks, for a front end that words them its own way. */
  readonly template: string;
  /** A finer reason a protocol names (SCIM's scimType: invalidFilter, uniqueness, mutability…). */
  readonly reason?: string;

  constructor(code: ErrorCode, message: string, options: { retryAfter?: number; cause?: unknown; reason?: string } = {}) {
    super(worded(message, 'text'), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryAfter = options.retryAfter;
    this.reason = options.reason;
    this.template = message;
  }
}

/** The message as a front end says it (`cli`: flags; `text`: field names, or a form's labels for them). */
export const messageFor = (err: AppError, front: Front, labels?: Readonly<Record<string, string>>): string => worded(err.template, front, labels);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** A refusal: guests are told to authenticate, signed-in callers that they may not. */
export function denied(isGuest: boolean, what: string): AppError {
  return isGuest ? new AppError('unauthenticated', `sign in to ${what}`) : new AppError('forbidden', `you may not ${what}`);
}
