import type { Context } from 'koa';
import type { Caller } from '../core';

/** What the core needs of a request: its Authorization header and the client's address. */
export function callerOf(ctx: Context): Caller {
  return { authorization: ctx.get('authorization') || null, client: ctx.ip, userAgent: ctx.get('user-agent') || null };
}
