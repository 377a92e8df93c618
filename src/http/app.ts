/** The Koa application: request log, security headers, error mapping, routes. */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import cors from '@koa/cors';
import type { Core } from '../core';
import { AppError } from '../errors';
import { errorMiddleware } from './errors';
import { clientAddress } from './client-address';
import { createRouter } from './routes';
import { registerForward } from './forward';
import { registerScim } from './scim';
import { createPageRouter } from './pages/routes';
import { lookMiddleware } from './pages/look';
import { OidcProvider } from './oidc';
import { createWebStats, recordRequest, WebStats } from './statistics';
import { createMetrics, Metrics } from './metrics';

/** The API's route table (method and path), as the router holds it: /openapi.json is checked against it. */
export type RouteTable = ReadonlyArray<{ path: string; methods: readonly string[] }>;

export function createApp(core: Core): { app: Koa; web: WebStats; metrics: Metrics; routes: RouteTable } {
  const trust = core.config.trustProxy;
  // Behind proxies, Koa reads X-Forwarded-Proto/Host; the client address is ours to choose (below).
  const app = new Koa({ proxy: trust !== null });
  const web = createWebStats();
  const metrics = createMetrics(core);
  const router = createRouter(core, web, metrics);
  registerForward(router, core, metrics);
  registerScim(router, core);

  // The reader's language and the operator's look, for every page and error page of the request.
  app.use(lookMiddleware(core));
  app.use(async (ctx, next) => {
    const started = performance.now();
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('x-forwarded-for'), trust);
    ctx.state.requestId = randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-store');
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      recordRequest(web, ctx.status, ms);
      metrics.observe(ctx, ms / 1000);
      // The path only: query strings and bodies may carry secrets and are never logged.
      core.logger.info('request', {
        request_id: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path.length > 200 ? ctx.path.slice(0, 200) + '…' : ctx.path,
        status: ctx.status,
        // A refusal's short reason (forward authentication), never a secret.
        ...(ctx.state.reason ? { reason: ctx.state.reason } : {}),
        duration_ms: Math.round(ms * 100) / 100,
      });
    }
  });
  if (core.config.corsOrigin.length > 0) {
    // An exact allow-list; bearer tokens only, so never credentials. Other origins get no CORS
    // headers (the browser then refuses to hand them the answer).
    const allowed = new Set(core.config.corsOrigin);
    app.use(
      cors({
        origin: (ctx) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : ''),
        allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
        allowHeaders: ['Authorization', 'Content-Type'],
        exposeHeaders: ['WWW-Authenticate', 'Retry-After', 'X-Request-Id'],
        credentials: false,
        maxAge: 600,
      }),
    );
  }
  app.use(errorMiddleware(core.logger));
  // Nothing answered: a path with other methods got 405 and Allow from allowedMethods; else 404.
  app.use(async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body == null) {
      // Under /scim/v2 a SCIM client reads SCIM Error bodies, for an address it got wrong too.
      if (ctx.path.startsWith('/scim/')) ctx.state.errorStyle = 'scim';
      // A person's mistyped address (/acount) gets a page, not JSON; programs get the JSON error.
      const api = /^\/(api|action|oidc|scim|\.well-known)(\/|$)/.test(ctx.path);
      if (core.config.pages && !api && ['GET', 'HEAD'].includes(ctx.method) && ctx.accepts('json', 'html') === 'html') {
        ctx.state.errorStyle = 'html';
        throw new AppError('not_found', 'There is no page at this address.');
      }
      throw new AppError('not_found', 'no such endpoint');
    }
    if (ctx.status === 405 && ctx.body == null) throw new AppError('method_not_allowed', `this endpoint takes ${ctx.response.get('Allow')}`);
  });
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  if (core.config.pages) {
    // The OpenID Connect provider signs people in on the pages, so it comes with them.
    const oidc = new OidcProvider(core);
    app.use(oidc.middleware());
    const pages = createPageRouter(core, oidc);
    app.use(pages.routes());
    app.use(pages.allowedMethods({ throw: false }));
  }
  // Errors are answered by errorMiddleware; keep Koa from printing them to stderr.
  app.silent = true;
  const routes = router.stack.map((layer) => ({ path: String(layer.path), methods: layer.methods.filter((m) => m !== 'HEAD') }));
  return { app, web, metrics, routes };
}
