/** Routes: parse → call the core → serialize. No rule lives here. */
import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../errors';
import type { Core } from '../core';
import { callerOf } from './caller';
import { actionItems } from './action-items';
import { linkageIds, objectBody, objectField, parseJson, requireJsonBody } from './body';
import { errorStyle } from './errors';
import { JSONAPI, pageDocument, toResource } from './jsonapi';
import { statisticsHandler, WebStats } from './statistics';
import type { Metrics } from './metrics';
import { openApiDocument } from './openapi';

/** How long /health/ready waits for the store before answering 503. */
const READY_TIMEOUT_MS = 1000;

function dataOf(ctx: Context): { type: unknown; id: unknown; attributes: Record<string, unknown> } {
  const data = objectField(objectBody(ctx, '"data"'), 'data')!;
  const attributes = objectField(data, 'attributes', false) ?? {};
  return { type: data.type, id: data.id, attributes };
}

export function createRouter(core: Core, web: WebStats, metrics: Metrics): Router {
  const router = new Router();
  const base = core.config.publicUrl;

  router.get('/ping', (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = 'pong';
  });

  // For load balancers and orchestrators: /ping says the process answers, this that the store does too.
  router.get('/health/ready', async (ctx) => {
    const ready = await core.ready(READY_TIMEOUT_MS);
    ctx.status = ready ? 200 : 503;
    ctx.type = 'application/json';
    ctx.body = { status: ready ? 'ready' : 'unavailable' };
    if (!ready) ctx.set('Retry-After', '1');
  });

  router.get('/statistics', statisticsHandler(core, web));
  router.get('/metrics', (ctx) => metrics.handler(ctx));

  let openapi: string | null = null;
  router.get('/openapi.json', (ctx) => {
    openapi ??= JSON.stringify(openApiDocument(core.catalog(), base));
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = openapi;
  });

  // The public halves of the signing keys, for services that verify Gatehouse's tokens.
  router.get('/.well-known/jwks.json', async (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/jwk-set+json';
    ctx.body = await core.keys.jwks();
  });

  router.post('/action/:type/:name', errorStyle('action'), requireJsonBody(['application/json']), parseJson, async (ctx) => {
    const type = String(ctx.params.type);
    const name = String(ctx.params.name);
    core.actions.assertExists(type, name);
    const attributes = objectField(objectBody(ctx, '"attributes"'), 'attributes')!;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json';
    ctx.body = actionItems(await core.actions.run(callerOf(ctx), type, name, attributes));
  });

  const api = new Router({ prefix: '/api' });
  api.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) ctx.type = JSONAPI;
  });

  api.get('/me', async (ctx) => {
    const me = await core.records.me(callerOf(ctx));
    ctx.body = { data: toResource(me.view, base), meta: me.meta };
  });

  // Relationships: members of a group, groups a row is shared with (to-many linkage, 204 on change).
  const members = '/usergroup/:id/relationships/members';
  const linkage = (self: string, type: string, ids: readonly string[]) => ({ links: { self }, data: ids.map((id) => ({ type, id })) });

  // Groups inside a group: their members are its members too.
  const memberGroups = '/usergroup/:id/relationships/groups';

  api.get(members, async (ctx) => {
    const id = String(ctx.params.id);
    ctx.body = linkage(`${base}/api/usergroup/${id}/relationships/members`, 'user_account', await core.groups.members(callerOf(ctx), id));
  });
  api.get(memberGroups, async (ctx) => {
    const id = String(ctx.params.id);
    ctx.body = linkage(`${base}/api/usergroup/${id}/relationships/groups`, 'usergroup', await core.groups.memberGroups(callerOf(ctx), id));
  });

  for (const [method, change] of [
    ['post', 'add'],
    ['delete', 'remove'],
  ] as const) {
    api[method](members, requireJsonBody(), parseJson, async (ctx) => {
      const actor = await core.auth.actor(callerOf(ctx));
      await core.groups.changeMembers(actor, String(ctx.params.id), linkageIds(ctx, 'user_account'), change);
      ctx.status = 204;
    });
    api[method](memberGroups, requireJsonBody(), parseJson, async (ctx) => {
      const actor = await core.auth.actor(callerOf(ctx));
      await core.groups.changeMemberGroups(actor, String(ctx.params.id), linkageIds(ctx, 'usergroup'), change);
      ctx.status = 204;
    });
    api[method]('/:type/:id/relationships/usergroups', requireJsonBody(), parseJson, async (ctx) => {
      const type = String(ctx.params.type);
      core.records.assertType(type);
      const actor = await core.auth.actor(callerOf(ctx));
      await core.records.changeShares(actor, type, String(ctx.params.id), linkageIds(ctx, 'usergroup'), change);
      ctx.status = 204;
    });
  }

  api.get('/:type/:id/relationships/usergroups', async (ctx) => {
    const [type, id] = [String(ctx.params.type), String(ctx.params.id)];
    const groups = await core.records.shares(callerOf(ctx), type, id);
    ctx.body = linkage(
      `${base}/api/${type}/${id}/relationships/usergroups`,
      'usergroup',
      groups.map((g) => g.reference_id),
    );
  });

  api.get('/:type', async (ctx) => {
    const type = String(ctx.params.type);
    ctx.body = pageDocument(type, await core.records.list(callerOf(ctx), type, ctx.query), base, ctx.query);
  });

  api.get('/:type/:id', async (ctx) => {
    ctx.body = { data: toResource(await core.records.get(callerOf(ctx), String(ctx.params.type), String(ctx.params.id)), base) };
  });

  api.post('/:type', requireJsonBody(), parseJson, async (ctx) => {
    const type = String(ctx.params.type);
    core.records.assertType(type);
    const actor = await core.auth.actor(callerOf(ctx));
    const data = dataOf(ctx);
    if (data.type !== type) throw new AppError('id_mismatch', `data.type must be "${type}"`);
    ctx.status = 201;
    ctx.body = { data: toResource(await core.records.create(actor, type, data.attributes), base) };
  });

  api.patch('/:type/:id', requireJsonBody(), parseJson, async (ctx) => {
    const type = String(ctx.params.type);
    core.records.assertType(type);
    const actor = await core.auth.actor(callerOf(ctx));
    const data = dataOf(ctx);
    // The id is in the path and in the body; they must agree, or nothing changes.
    if (data.type !== type) throw new AppError('id_mismatch', `data.type must be "${type}"`);
    if (data.id !== ctx.params.id) throw new AppError('id_mismatch', 'data.id must equal the id in the path');
    ctx.body = { data: toResource(await core.records.update(actor, type, String(ctx.params.id), data.attributes), base) };
  });

  api.delete('/:type/:id', async (ctx) => {
    const type = String(ctx.params.type);
    core.records.assertType(type);
    await core.records.remove(await core.auth.actor(callerOf(ctx)), type, String(ctx.params.id));
    ctx.status = 204;
  });

  router.use(api.routes(), api.allowedMethods());
  return router;
}
