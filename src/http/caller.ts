import type { Context } from 'koa';
import type { Caller } from '../core';

/** Some clients send these instead of leaving the header out. */
const PLACEHOLDERS = new Set(['', 'null', 'undefined']);

/** The token in an Authorization header, or null when the header carries no bearer credentials. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const m = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!m) return null;
  const token = (m[1] ?? '').trim();
  return PLACEHOLDERS.has(token) ? null : token;
}

/** What the core needs of a request: the bearer token it carries and the client's address. */
export function callerOf(ctx: Context): Caller {
  return { token: bearerToken(ctx.get('authorization')), client: ctx.ip, userAgent: ctx.get('user-agent') || null };
}
