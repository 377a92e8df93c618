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
 * The catalogue of refusal reasons: a stable name for each rule that refuses a request, and when it
 * does (better-auth's BASE_ERROR_CODES is the model: one key per refusal, with its words). Every
 * `forbidden` carries one (the compiler asks for it), so a client, a test and the docs tell the
 * refusals apart; an error's `reason` is shown beside its `code` in HTTP bodies and in the
 * shell's --json errors. docs/http-api.md has this table (test/unit/reasons.test.ts holds them equal).
 */
export const REASONS = {
  not_permitted: 'the permission of the table or of the row does not let the caller do this',
  administrators_only: 'only an administrator (or the operator at the shell) may do this',
  field_not_writable: 'the request sets a field the caller may not write: an administrator’s field, or one a new account does not take',
  built_in_records: 'records of this type are built in: they are not created or deleted',
  system_group: 'the users and administrators groups are not renamed, changed or deleted',
  users_group_fixed: 'every account is in users, and users goes inside no group: neither is changed by hand',
  administrators_holds_people: 'no group goes inside administrators: it holds named people only',
  account_group_not_nestable: 'an account’s own group does not go inside a group that only managed groups go into',
  managed_by_file: 'a configuration file manages the object: the change belongs in the file (config apply)',
  managed_by_directory: 'the account or group comes from a directory source: the change belongs in the directory',
  managed_by_scim: 'an app provisions the account over SCIM (it has an externalId): it is deleted there, unless an administrator forces it',
  scim_may_not_touch_administrators: 'a SCIM token changes no administrator and not who administers',
  administrator_exists: 'an administrator exists already (bootstrap, become_an_administrator)',
  totp_already_on: 'TOTP is on already: turn it off before enrolling another device',
  api_key_not_a_session: 'an API key has no session: adding a way in, or confirming who you are, needs a signed-in session',
  account_disabled: 'the account is disabled',
  not_in_allowed_groups: 'the app is open to members of certain groups only',
  linked_elsewhere: 'the account at the other provider is linked to another account here',
  email_not_trusted: 'an account with this email address exists here, and the provider is not trusted with it: sign in, then link',
  no_verified_email: 'the account at the other provider (GitHub) has no verified primary email address',
  not_in_organization: 'the account at the other provider (GitHub) is not a member of the organization it is limited to',
  cross_site_form: 'a page’s form was sent from another site',
  form_expired: 'a page’s form has expired: reload the page and send it again',
  store_not_empty: 'a copy into a store that already holds accounts',
  signup_closed: 'a check of the signup chain refused: signup is closed to guests, or the way in needs an invitation (code signup_closed)',
  email_unverified: 'the account’s email address is not confirmed and the server asks for it (code email_unverified)',
  reauthentication_required: 'the change needs a recent sign-in, or the password or a second factor entered again (code reauthentication_required)',
  last_administrator: 'the change would leave no administrator (code last_administrator)',
  last_credential: 'the change would leave the account no way to sign in (code last_credential)',
} as const;

export type Reason = keyof typeof REASONS;

/** Codes that are one rule's refusal each: their errors carry the code's own name as their reason. */
const OWN_REASON: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'signup_closed',
  'email_unverified',
  'reauthentication_required',
  'last_administrator',
  'last_credential',
]);

export interface AppErrorOptions {
  /** Seconds a client should wait (rate_limited, unavailable). */
  retryAfter?: number;
  cause?: unknown;
  /** Which rule refused (the catalogue above); every `forbidden` names one. */
  reason?: Reason;
  /** SCIM's name for what was wrong (RFC 7644 section 3.12: invalidFilter, invalidValue, …), said in SCIM's error bodies only. */
  scimType?: string;
}

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
  /** Which rule refused (REASONS): always on a `forbidden`, and on the codes that are one rule each. */
  readonly reason?: Reason;
  /** SCIM's scimType for what was wrong (invalidFilter, invalidPath, invalidValue…). */
  readonly scimType?: string;

  /** A `forbidden` says which rule refused. */
  constructor(code: 'forbidden', message: string, options: AppErrorOptions & { reason: Reason });
  constructor(code: Exclude<ErrorCode, 'forbidden'>, message: string, options?: AppErrorOptions);
  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(worded(message, 'text'), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryAfter = options.retryAfter;
    this.reason = options.reason ?? (OWN_REASON.has(code) ? (code as Reason) : undefined);
    this.scimType = options.scimType;
    this.template = message;
  }
}

/** The same error in other words (a configuration file's line and column before it): its code and its reason kept. */
export function reworded(err: AppError, message: string): AppError {
  const Same = AppError as unknown as new (code: ErrorCode, message: string, options: AppErrorOptions) => AppError;
  return new Same(err.code, message, { reason: err.reason });
}

/** The message as a front end says it (`cli`: flags; `text`: field names, or a form's labels for them). */
export const messageFor = (err: AppError, front: Front, labels?: Readonly<Record<string, string>>): string => worded(err.template, front, labels);

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** A refusal: guests are told to authenticate, signed-in callers that they may not (for `reason`). */
export function denied(isGuest: boolean, what: string, reason: Reason = 'not_permitted'): AppError {
  return isGuest ? new AppError('unauthenticated', `sign in to ${what}`) : new AppError('forbidden', `you may not ${what}`, { reason });
}
