/**
 * The single mapping from error codes to HTTP, and the two error body shapes (actions and
 * JSON:API). Only AppErrors show their message; anything else is a generic 500 and is logged
 * without its text reaching the client.
 */
import type { Context, Next } from 'koa';
import { AppError, ERROR_CODES, ErrorCode, isAppError } from '../errors';
import { toStoreError } from '../store/connection';
import type { Logger } from '../log';

export type ErrorStyle = 'action' | 'jsonapi';

/** Koa and body-parser errors carry an HTTP status; turn the ones we expect into AppErrors. */
export function toAppError(err: unknown): AppError | null {
  const mapped = toStoreError(err, 'request failed');
  if (isAppError(mapped)) return mapped;
  const e = err as { status?: number; expose?: boolean; type?: string } | null;
  // Never reuse the parser's message: it can quote the body it failed on.
  switch (e?.status) {
    case 400:
      return new AppError('invalid_input', 'the request body is not valid JSON');
    case 413:
      return new AppError('body_too_large', 'the request body is larger than 64 KiB');
    case 415:
      return new AppError('unsupported_media_type', 'unsupported content encoding or type');
    default:
      return null;
  }
}

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code];
}

export function errorBody(style: ErrorStyle, err: AppError): unknown {
  if (style === 'action') {
    return [{ ResponseType: 'client.notify', Attributes: { type: 'error', title: 'failed', message: err.message, code: err.code } }];
  }
  return { errors: [{ status: String(statusOf(err.code)), code: err.code, title: err.message }] };
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
      const style: ErrorStyle = ctx.path.startsWith('/action/') ? 'action' : 'jsonapi';
      ctx.status = statusOf(err.code);
      ctx.type = style === 'action' ? 'application/json' : 'application/vnd.api+json';
      ctx.body = errorBody(style, err);
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
      if (err.code === 'invalid_token') ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
      else if (err.code === 'unauthenticated') ctx.set('WWW-Authenticate', 'Bearer');
    }
  };
}
