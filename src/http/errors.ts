/**
 * The single mapping from error codes to HTTP, and the two error body shapes (actions and
 * JSON:API), chosen where each route is defined. Only AppErrors show their message; anything
 * else is a generic 500 and is logged without its text reaching the client.
 */
import type { Context, Next } from 'koa';
import { errorPage, PAGE_CSP } from './pages/html';
import { rateLimited, t } from './pages/look';
import { AppError, ErrorCode, isAppError } from '../errors';
import type { Logger } from '../log';

export type ErrorStyle = 'action' | 'jsonapi' | 'html' | 'scim';

/** Every code's status: a new code does not compile until it has one. */
export const STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_input: 400,
  password_mismatch: 400,
  password_too_short: 400,
  password_too_long: 400,
  password_too_common: 400,
  token_invalid: 400,
  token_expired: 400,
  invalid_credentials: 401,
  unauthenticated: 401,
  invalid_token: 401,
  otp_required: 401,
  otp_invalid: 401,
  forbidden: 403,
  signup_closed: 403,
  email_unverified: 403,
  reauthentication_required: 403,
  not_found: 404,
  email_taken: 409,
  name_taken: 409,
  conflict: 409,
  last_administrator: 409,
  last_credential: 409,
  passkey_invalid: 401,
  id_mismatch: 409,
  method_not_allowed: 405,
  precondition_failed: 412,
  bad_store: 500,
  body_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** Gatehouse's extension of SCIM's Error: `reason`, which rule refused (errors.ts REASONS). */
const SCIM_ERROR_EXTENSION = 'urn:gatehouse:params:scim:api:messages:2.0:Error';

/** RFC 7644 section 3.12's scimType: the reason the core gave, or the one SCIM names for the code. */
function scimType(err: AppError): string | undefined {
  if (err.scimType) return err.scimType;
  if (err.code === 'email_taken' || err.code === 'name_taken') return 'uniqueness';
  if (err.code === 'invalid_input') return 'invalidValue';
  return undefined;
}

/** Koa and body-parser errors carry an HTTP status; turn the ones we expect into AppErrors. */
export function toAppError(err: unknown): AppError | null {
  if (isAppError(err)) return err;
  const e = err as { status?: number; limit?: number } | null;
  // Never reuse the parser's message: it can quote the body it failed on.
  switch (e?.status) {
    case 400:
      return new AppError('invalid_input', 'the request body is not valid JSON');
    case 413:
      return new AppError('body_too_large', `the request body is larger than ${Math.round((typeof e.limit === 'number' ? e.limit : 65536) / 1024)} KiB`);
    case 415:
      return new AppError('unsupported_media_type', 'unsupported content encoding or type');
    default:
      return null;
  }
}

/** An error page's words in the reader's language, where the page knows the situation; else the core's. */
function pageMessage(err: AppError): string {
  if (err.reason === 'form_expired') return t('error.form_expired');
  if (err.reason === 'cross_site_form') return t('error.cross_site_form');
  if (err.code === 'rate_limited') return rateLimited(err);
  if (err.code === 'unavailable') return t('error.unavailable');
  if (err.code === 'body_too_large') return t('pages.refused.body_too_large');
  return err.message;
}

export function errorBody(style: ErrorStyle, err: AppError): unknown {
  if (style === 'html') return errorPage(pageMessage(err), err.code === 'not_found' ? t('error.not_found') : undefined);
  if (style === 'action') {
    return [
      {
        ResponseType: 'client.notify',
        Attributes: { type: 'error', title: 'failed', message: err.message, code: err.code, ...(err.reason ? { reason: err.reason } : {}) },
      },
    ];
  }
  if (style === 'scim') {
    // RFC 7644 section 3.12: the status as a string, scimType where SCIM names the reason. Which
    // rule refused is no attribute of SCIM's Error: it comes as an extension (RFC 7643 section
    // 3.3), its URN in `schemas` and its attributes under that URN, which a SCIM client that
    // does not know it passes over.
    return {
      schemas: [SCIM_ERROR, ...(err.reason ? [SCIM_ERROR_EXTENSION] : [])],
      status: String(STATUS[err.code]),
      ...(scimType(err) ? { scimType: scimType(err) } : {}),
      detail: err.message,
      ...(err.reason ? { [SCIM_ERROR_EXTENSION]: { reason: err.reason } } : {}),
    };
  }
  // `reason` beside `code`: which rule refused (errors.ts REASONS), when one did.
  return { errors: [{ status: String(STATUS[err.code]), code: err.code, ...(err.reason ? { reason: err.reason } : {}), title: err.message }] };
}

/** Routes pick their error body style; the outermost handler answers in it. */
export function errorStyle(style: ErrorStyle) {
  return async (ctx: Context, next: Next) => {
    ctx.state.errorStyle = style;
    await next();
  };
}

export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (thrown) {
      let err = toAppError(thrown);
      if (!err) {
        const e = thrown as { name?: string; code?: string };
        // Name and code only: messages of driver errors can contain SQL and bound values.
        logger.error('internal_error', { request_id: ctx.state.requestId, name: e?.name ?? 'unknown', code: e?.code ?? null });
        err = new AppError('internal', 'internal error; the server log has the details');
      } else if (err.code === 'unavailable') {
        logger.warn('store_unavailable', { request_id: ctx.state.requestId });
      }
      const style: ErrorStyle = ctx.state.errorStyle ?? 'jsonapi';
      ctx.status = STATUS[err.code];
      ctx.type =
        style === 'action'
          ? 'application/json'
          : style === 'html'
            ? 'text/html; charset=utf-8'
            : style === 'scim'
              ? 'application/scim+json'
              : 'application/vnd.api+json';
      if (style === 'html') ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.body = errorBody(style, err);
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      if (err.code === 'invalid_token') ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      else if (err.code === 'unauthenticated') ctx.set('WWW-Authenticate', 'Bearer');
    }
  };
}
