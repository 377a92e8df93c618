/**
 * Request bodies: JSON only, at most 64 KiB. Other content types get 415 before any parsing.
 */
import type { Context, Next } from 'koa';
import type { KoaBodyMiddlewareOptions } from 'koa-body';
import { AppError } from '../errors';
import { assertPlainJson } from '../core';

export const BODY_LIMIT = 64 * 1024;
const JSON_TYPES = ['application/json', 'application/vnd.api+json'];

function hasBody(ctx: Context): boolean {
  return Boolean(ctx.get('transfer-encoding')) || Number(ctx.get('content-length') || 0) > 0;
}

/** `types`: the media types this route accepts. */
export function requireJsonBody(types: readonly string[] = JSON_TYPES) {
  return async (ctx: Context, next: Next) => {
    if (hasBody(ctx) && !ctx.is(...types)) {
      throw new AppError('unsupported_media_type', `send the body as ${types.join(' or ')}`);
    }
    await next();
  };
}

/**
 * koa-body's middleware, made from `options` at the first request that needs it: the library
 * (with its multipart and validation dependencies) is not loaded for servers that only read.
 * Every body it parses, whatever the route, is refused (400) when a key at any depth names the
 * prototype chain (`__proto__`, `constructor`, `prototype`).
 */
export function lazyKoaBody(options: Partial<KoaBodyMiddlewareOptions>): (ctx: Context, next: Next) => Promise<void> {
  let middleware: Promise<(ctx: Context, next: Next) => Promise<void>> | null = null;
  return async (ctx, next) => {
    middleware ??= import('koa-body').then((m) => m.koaBody(options) as unknown as (ctx: Context, next: Next) => Promise<void>);
    return (await middleware)(ctx, () => {
      assertPlainJson(ctx.request.body);
      return next();
    });
  };
}

const parseJsonBody = lazyKoaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: BODY_LIMIT,
  jsonTypes: JSON_TYPES,
  multipart: false,
  urlencoded: false,
  text: false,
  parsedMethods: ['POST', 'PATCH', 'PUT', 'DELETE'] as never,
});

/**
 * The JSON body parser. A body whose Content-Encoding (gzip, deflate, br) does not decode makes
 * zlib throw without an HTTP status: that is the client's fault, so a 400, never a 500.
 */
export async function parseJson(ctx: Context, next: Next): Promise<void> {
  let parsed = false;
  try {
    await parseJsonBody(ctx, () => {
      parsed = true;
      return next();
    });
  } catch (err) {
    const e = err as { status?: number; code?: unknown } | null;
    if (!parsed && e?.status === undefined && typeof e?.code === 'string' && /^(Z_|ERR__ERROR|ERR_BROTLI)/.test(e.code)) {
      throw new AppError('invalid_input', `the request body does not decode as ${ctx.get('content-encoding')}`);
    }
    throw err;
  }
}

/** The parsed body as a plain object, or a 400 naming what was expected. */
export function objectBody(ctx: Context, what: string): Record<string, unknown> {
  const body: unknown = ctx.request.body;
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('invalid_input', `the body must be a JSON object with ${what}`);
  }
  return body as Record<string, unknown>;
}

export function objectField(obj: Record<string, unknown>, field: string, required = true): Record<string, unknown> | undefined {
  const value = Object.hasOwn(obj, field) ? obj[field] : undefined;
  if (value === undefined && !required) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('invalid_input', `${field} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** At most this many items in one relationship change. */
export const MAX_LINKAGE = 100;

/**
 * A JSON:API to-many linkage `{"data":[{"type":<type>,"id":"…"}]}`: the ids, or a 400 saying
 * what is wrong with it.
 */
export function linkageIds(ctx: Context, type: string): string[] {
  const data = objectBody(ctx, `"data": [{"type": "${type}", "id": "…"}]`).data;
  if (!Array.isArray(data)) throw new AppError('invalid_input', `data must be an array of {"type": "${type}", "id": "…"}`);
  if (data.length > MAX_LINKAGE) throw new AppError('invalid_input', `at most ${MAX_LINKAGE} items per request`);
  return data.map((item: unknown, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new AppError('invalid_input', `data[${i}] must be an object`);
    const { type: t, id } = item as Record<string, unknown>;
    if (t !== type) throw new AppError('invalid_input', `data[${i}].type must be "${type}"`);
    if (typeof id !== 'string' || id === '') throw new AppError('invalid_input', `data[${i}].id must be a reference id`);
    return id;
  });
}
