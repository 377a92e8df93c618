/** Routes: parse → call the core → serialize. No rule lives here. */
import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../errors';
import type { Core } from '../core';
import { findAction, runAction } from '../actions/registry';
import { authenticate, authenticateFor } from '../auth/authenticate';
import { GUEST, Principal } from '../permission/check';
import { createRecord, deleteRecord, getRecord, listRecordsFor, updateRecord } from '../records/service';
import { recordType, RecordType } from '../records/types';
import { objectBody, objectField, parseJson, requireJsonBody } from './body';
import { JSONAPI, pageDocument, toResource } from './jsonapi';
import { statisticsHandler, WebStats } from './statistics';

function principalOf(core: Core, ctx: Context): Promise<Principal> {
  return authenticate(core, ctx.get('authorization') || undefined);
}

function typeOf(ctx: Context): RecordType {
  const type = recordType(String(ctx.params.type));
  if (!type) throw new AppError('not_found', 'no such record type');
  return type;
}

function dataOf(ctx: Context): { type: unknown; id: unknown; attributes: Record<string, unknown> } {
  const data = objectField(objectBody(ctx, '"data"'), 'data')!;
  const attributes = objectField(data, 'attributes', false) ?? {};
  return { type: data.type, id: data.id, attributes };
}

export function createRouter(core: Core, web: WebStats): Router {
  const router = new Router();
  const base = core.config.publicUrl;

  router.get('/ping', (ctx) => {
    ctx.type = 'text/plain';
    ctx.body = 'pong';
  });

  router.get('/statistics', statisticsHandler(core, web));

  router.post('/action/:type/:name', requireJsonBody(['application/json']), parseJson, async (ctx) => {
    const def = findAction(String(ctx.params.type), String(ctx.params.name));
    if (!def) throw new AppError('not_found', 'no such action');
    const attributes = objectField(objectBody(ctx, '"attributes"'), 'attributes')!;
    const principal = def.ignoresToken ? GUEST : await principalOf(core, ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'application/json';
    ctx.body = await runAction(def, { deps: core, principal, attributes, clientAddress: ctx.ip });
  });

  const api = new Router({ prefix: '/api' });
  api.use(async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) ctx.type = JSONAPI;
  });

  api.get('/:type', async (ctx) => {
    const type = typeOf(ctx);
    const { principal, table } = await authenticateFor(core, ctx.get('authorization') || undefined, type.name);
    const page = await listRecordsFor(core, principal, type, ctx.query, table);
    ctx.body = pageDocument(type, page, base, ctx.query);
  });

  api.get('/:type/:id', async (ctx) => {
    const type = typeOf(ctx);
    // The token check and the row read run side by side; getRecord decides once both are in.
    ctx.body = { data: toResource(type, await getRecord(core, principalOf(core, ctx), type, String(ctx.params.id)), base) };
  });

  api.post('/:type', requireJsonBody(), parseJson, async (ctx) => {
    const type = typeOf(ctx);
    const principal = await principalOf(core, ctx);
    const data = dataOf(ctx);
    if (data.type !== type.name) throw new AppError('id_mismatch', `data.type must be "${type.name}"`);
    const row = await createRecord(core, principal, type, data.attributes);
    ctx.status = 201;
    ctx.body = { data: toResource(type, row, base) };
  });

  api.patch('/:type/:id', requireJsonBody(), parseJson, async (ctx) => {
    const type = typeOf(ctx);
    const principal = await principalOf(core, ctx);
    const data = dataOf(ctx);
    // The id is in the path and in the body; they must agree, or nothing changes.
    if (data.type !== type.name) throw new AppError('id_mismatch', `data.type must be "${type.name}"`);
    if (data.id !== ctx.params.id) throw new AppError('id_mismatch', 'data.id must equal the id in the path');
    const row = await updateRecord(core, principal, type, String(ctx.params.id), data.attributes);
    ctx.body = { data: toResource(type, row, base) };
  });

  api.delete('/:type/:id', async (ctx) => {
    const type = typeOf(ctx);
    const principal = await principalOf(core, ctx);
    await deleteRecord(core, principal, type, String(ctx.params.id));
    ctx.status = 204;
  });

  router.use(api.routes(), api.allowedMethods());
  return router;
}
