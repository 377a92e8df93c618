/**
 * SCIM 2.0 at /scim/v2 (RFC 7644): a provisioning service's token opens it and nothing else
 * does; answers and errors are `application/scim+json`. Routes parse and serialize; the rules are
 * the core's.
 */
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Core, ScimQuery } from '../core';
import { AppError } from '../errors';
import { bearerToken } from './caller';
import { errorStyle } from './errors';

const PREFIX = '/scim/v2';

/** The list query's parameters, one value each (a repeated parameter is refused). */
function queryOf(ctx: Context): ScimQuery {
  const q: ScimQuery = {};
  for (const key of ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes'] as const) {
    const v = ctx.query[key];
    if (Array.isArray(v)) throw new AppError('invalid_input', `${key} is given more than once`, { reason: 'invalidValue' });
    if (v !== undefined) q[key] = v;
  }
  return q;
}

function send(ctx: Context, body: unknown, status = 200): void {
  ctx.status = status;
  ctx.type = 'application/scim+json';
  const version = (body as { meta?: { version?: string } }).meta?.version;
  if (version) ctx.set('ETag', version);
  ctx.body = body;
}

export function registerScim(router: Router, core: Core): void {
  const scim = errorStyle('scim');
  const authenticated = async (ctx: Context, next: Next) => {
    await core.scim.authenticate(bearerToken(ctx.get('authorization')));
    await next();
  };
  const get = (path: string, handler: (ctx: Context) => Promise<unknown> | unknown) =>
    router.get(`${PREFIX}${path}`, scim, authenticated, async (ctx) => send(ctx, await handler(ctx)));

  get('/ServiceProviderConfig', () => core.scim.discovery('ServiceProviderConfig'));
  get('/ResourceTypes', () => core.scim.discovery('ResourceTypes'));
  get('/ResourceTypes/:id', (ctx) => core.scim.discovery('ResourceTypes', ctx.params.id));
  get('/Schemas', () => core.scim.discovery('Schemas'));
  get('/Schemas/:id', (ctx) => core.scim.discovery('Schemas', ctx.params.id));
  get('/Users', (ctx) => core.scim.listUsers(queryOf(ctx)));
  get('/Users/:id', (ctx) => core.scim.getUser(ctx.params.id!, queryOf(ctx)));
  get('/Groups', (ctx) => core.scim.listGroups(queryOf(ctx)));
  get('/Groups/:id', (ctx) => core.scim.getGroup(ctx.params.id!, queryOf(ctx)));
}
