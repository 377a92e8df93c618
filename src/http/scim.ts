/**
 * SCIM 2.0 at /scim/v2 (RFC 7644): a provisioning service's token opens it and nothing else
 * does; answers and errors are `application/scim+json`. Routes parse and serialize; the rules are
 * the core's.
 */
import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Actor, Core, ScimQuery } from '../core';
import { AppError } from '../errors';
import { callerOf } from './caller';
import { errorStyle } from './errors';
import { lazyKoaBody, objectBody, requireJsonBody } from './body';

const PREFIX = '/scim/v2';
/** A group's PUT carries every member: room for some thousands. */
export const SCIM_BODY_LIMIT = 1024 * 1024;
const SCIM_TYPES = ['application/scim+json', 'application/json'];
const parseScimBody = lazyKoaBody({
  json: true,
  jsonStrict: true,
  jsonLimit: SCIM_BODY_LIMIT,
  jsonTypes: SCIM_TYPES,
  multipart: false,
  urlencoded: false,
  text: false,
  parsedMethods: ['POST', 'PATCH', 'PUT'] as never,
});

/** The list query's parameters, one value each (a repeated parameter is refused). */
function queryOf(ctx: Context): ScimQuery {
  const q: ScimQuery = {};
  for (const key of ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes'] as const) {
    const v = ctx.query[key];
    if (Array.isArray(v)) throw new AppError('invalid_input', `${key} is given more than once`, { scimType: 'invalidValue' });
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

// Absent is undefined; present (even empty) is checked as given.
const ifMatch = (ctx: Context): string | undefined => (ctx.req.headers['if-match'] === undefined ? undefined : ctx.get('if-match'));

export function registerScim(router: Router, core: Core): void {
  const scim = errorStyle('scim');
  const authenticated = async (ctx: Context, next: Next) => {
    ctx.state.scimActor = await core.scim.authenticate(callerOf(ctx));
    await next();
  };
  const get = (path: string, handler: (ctx: Context) => Promise<unknown> | unknown) =>
    router.get(`${PREFIX}${path}`, scim, authenticated, async (ctx) => send(ctx, await handler(ctx)));
  const body = [requireJsonBody(SCIM_TYPES), parseScimBody];
  const actor = (ctx: Context) => ctx.state.scimActor as Actor;
  const json = (ctx: Context) => objectBody(ctx, 'a SCIM resource');

  get('/ServiceProviderConfig', () => core.scim.discovery('ServiceProviderConfig'));
  get('/ResourceTypes', () => core.scim.discovery('ResourceTypes'));
  get('/ResourceTypes/:id', (ctx) => core.scim.discovery('ResourceTypes', ctx.params.id));
  get('/Schemas', () => core.scim.discovery('Schemas'));
  get('/Schemas/:id', (ctx) => core.scim.discovery('Schemas', ctx.params.id));
  get('/Users', (ctx) => core.scim.listUsers(queryOf(ctx)));
  get('/Users/:id', (ctx) => core.scim.getUser(ctx.params.id!, queryOf(ctx)));
  get('/Groups', (ctx) => core.scim.listGroups(queryOf(ctx)));
  get('/Groups/:id', (ctx) => core.scim.getGroup(ctx.params.id!, queryOf(ctx)));

  router.post(`${PREFIX}/.search`, scim, authenticated, ...body, async (ctx) => send(ctx, await core.scim.search('all', json(ctx))));
  for (const [kind, create, change, remove] of [
    ['Users', core.scim.createUser, core.scim.changeUser, core.scim.deleteUser],
    ['Groups', core.scim.createGroup, core.scim.changeGroup, core.scim.deleteGroup],
  ] as const) {
    router.post(`${PREFIX}/${kind}/.search`, scim, authenticated, ...body, async (ctx) => send(ctx, await core.scim.search(kind, json(ctx))));
    router.post(`${PREFIX}/${kind}`, scim, authenticated, ...body, async (ctx) => {
      const created = await create(actor(ctx), json(ctx));
      ctx.set('Location', String((created.meta as { location: string }).location));
      send(ctx, created, 201);
    });
    router.put(`${PREFIX}/${kind}/:id`, scim, authenticated, ...body, async (ctx) =>
      send(ctx, await change(actor(ctx), ctx.params.id!, json(ctx), { patch: false, ifMatch: ifMatch(ctx) })),
    );
    router.patch(`${PREFIX}/${kind}/:id`, scim, authenticated, ...body, async (ctx) =>
      send(ctx, await change(actor(ctx), ctx.params.id!, json(ctx), { patch: true, ifMatch: ifMatch(ctx) })),
    );
    router.delete(`${PREFIX}/${kind}/:id`, scim, authenticated, async (ctx) => {
      await remove(actor(ctx), ctx.params.id!, ifMatch(ctx));
      ctx.status = 204;
    });
  }
}
