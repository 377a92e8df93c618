/**
 * GET /metrics in Prometheus's text format (prom-client). Each app has its own registry, so
 * several servers in one process (the tests) never mix their figures.
 *
 * Requests are labelled by route pattern (`/api/:type/:id`), never by path: paths carry ids,
 * and one label value per id would grow without bound.
 */
import client from 'prom-client';
import type { Context } from 'koa';
import type { Core, MetricsSnapshot } from '../core';
import { callerOf } from './caller';

export interface Metrics {
  /** Counts one answered request. */
  observe(ctx: Context, seconds: number): void;
  /** Counts one forward-authentication answer by outcome (allowed, unauthenticated, denied_…). */
  forward(outcome: string): void;
  handler(ctx: Context): Promise<void>;
  stop(): void;
}

/** The route a request matched, as a bounded label value. */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  if (typeof matched === 'string') return matched;
  const path = ctx.path;
  if (path === '/.well-known/openid-configuration') return path;
  if (path.startsWith('/oidc/')) return OIDC_ROUTES.find(([, pattern]) => pattern.test(path))?.[0] ?? '/oidc/*';
  return 'unmatched';
}

/** The provider's endpoints (it routes them itself): one label each, ids replaced by :uid. */
const OIDC_ROUTES: ReadonlyArray<[string, RegExp]> = [
  ['/oidc/auth', /^\/oidc\/auth$/],
  ['/oidc/auth/:uid', /^\/oidc\/auth\/[^/]+$/],
  ['/oidc/interaction/:uid', /^\/oidc\/interaction\/[^/]+$/],
  ['/oidc/interaction/:uid/:step', /^\/oidc\/interaction\/[^/]+\/[^/]+$/],
  ['/oidc/token', /^\/oidc\/token$/],
  ['/oidc/token/revocation', /^\/oidc\/token\/revocation$/],
  ['/oidc/token/introspection', /^\/oidc\/token\/introspection$/],
  ['/oidc/me', /^\/oidc\/me$/],
  ['/oidc/jwks', /^\/oidc\/jwks$/],
  ['/oidc/session/end', /^\/oidc\/session\/end$/],
  ['/oidc/session/end/confirm', /^\/oidc\/session\/end\/confirm$/],
  ['/oidc/session/end/success', /^\/oidc\/session\/end\/success$/],
];

export function createMetrics(core: Core): Metrics {
  const register = new client.Registry();
  client.collectDefaultMetrics({ register, eventLoopMonitoringPrecision: 10 });

  const requests = new client.Counter({
    name: 'gatehouse_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [register],
  });
  const latency = new client.Histogram({
    name: 'gatehouse_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by route pattern and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [register],
  });

  // Figures the core keeps: read at scrape time from the snapshot the handler just fetched.
  let snapshot: MetricsSnapshot | null = null;
  const fromCore = (name: string, help: string, read: (m: MetricsSnapshot) => number, type: 'counter' | 'gauge' = 'counter') => {
    const Metric = type === 'counter' ? client.Counter : client.Gauge;
    new Metric({
      name,
      help,
      registers: [register],
      collect(this: client.Counter | client.Gauge) {
        if (!snapshot) return;
        if (this instanceof client.Gauge) this.set(read(snapshot));
        else {
          this.reset();
          this.inc(read(snapshot));
        }
      },
    });
  };
  new client.Counter({
    name: 'gatehouse_signins_total',
    help: 'Signins since start, by outcome',
    labelNames: ['outcome'] as const,
    registers: [register],
    collect() {
      if (!snapshot) return;
      this.reset();
      this.inc({ outcome: 'ok' }, snapshot.signinsOk);
      this.inc({ outcome: 'failed' }, snapshot.signinsFailed);
    },
  });
  new client.Counter({
    name: 'gatehouse_provider_signins_total',
    help: 'Sign-ins through upstream OpenID Connect providers since start, by provider and outcome (ok, refused)',
    labelNames: ['provider', 'outcome'] as const,
    registers: [register],
    collect() {
      if (!snapshot) return;
      this.reset();
      for (const [provider, c] of Object.entries(snapshot.providerSignins)) {
        this.inc({ provider, outcome: 'ok' }, c.ok);
        this.inc({ provider, outcome: 'refused' }, c.refused);
      }
    },
  });
  for (const [name, help, read] of [
    ['gatehouse_ldap_binds_total', 'LDAP simple binds with a password since start, by outcome (ok, failed)', (m: MetricsSnapshot) => m.ldap.binds],
    [
      'gatehouse_ldap_searches_total',
      'LDAP searches answered since start, by outcome (ok, refused, not_found, failed)',
      (m: MetricsSnapshot) => m.ldap.searches,
    ],
    [
      'gatehouse_saml_signins_total',
      'SAML sign-ins since start, by outcome (ok: a signed Response sent; refused: the gate or a disabled account)',
      (m: MetricsSnapshot) => m.saml,
    ],
  ] as const) {
    new client.Counter({
      name,
      help,
      labelNames: ['outcome'] as const,
      registers: [register],
      collect() {
        if (!snapshot) return;
        this.reset();
        for (const [outcome, n] of Object.entries(read(snapshot))) this.inc({ outcome }, n);
      },
    });
  }
  fromCore('gatehouse_signups_total', 'Accounts created by signup since start', (m) => m.signups);
  fromCore('gatehouse_lockouts_total', 'Lockouts caused since start (account and address, account-wide, second factor)', (m) => m.lockouts);
  fromCore('gatehouse_password_hash_queue_depth', 'Password hashes waiting for a hashing slot', (m) => m.hashesQueued, 'gauge');
  fromCore('gatehouse_password_hashes_running', 'Password hashes being computed now', (m) => m.hashesRunning, 'gauge');
  fromCore('gatehouse_password_hashes_total', 'Password hashes and checks done since start (a refused sign-in pays one like any other)', (m) => m.hashesDone);
  new client.Gauge({
    name: 'gatehouse_store_pool_connections',
    help: "The store's connection pool, by state (used, free, pending acquisitions)",
    labelNames: ['state'] as const,
    registers: [register],
    collect() {
      const pool = snapshot?.pool;
      if (!pool) return;
      this.set({ state: 'used' }, pool.used);
      this.set({ state: 'free' }, pool.free);
      this.set({ state: 'pending' }, pool.pending);
    },
  });

  new client.Counter({
    name: 'gatehouse_deliveries_total',
    help: 'Delivery tries by this server since start, by kind (mail, webhook, scim) and outcome (delivered, retried, failed)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [register],
    collect() {
      if (!snapshot) return;
      this.reset();
      for (const [kind, outcomes] of Object.entries(snapshot.deliveries)) {
        for (const [outcome, n] of Object.entries(outcomes)) this.inc({ kind, outcome }, n);
      }
    },
  });
  fromCore('gatehouse_delivery_queue_pending', 'Messages (mail and webhooks) waiting in the queue', (m) => m.queue.pending, 'gauge');
  fromCore('gatehouse_delivery_queue_failed', 'Messages that failed for good and are kept for the operator', (m) => m.queue.failed, 'gauge');
  fromCore('gatehouse_delivery_oldest_pending_seconds', 'Age of the oldest message still waiting (0: none)', (m) => m.queue.oldestPendingSeconds, 'gauge');

  const forwards = new client.Counter({
    name: 'gatehouse_forward_auth_total',
    help: 'Forward-authentication answers, by outcome (allowed, unauthenticated, denied_no_app, denied_not_member, denied_two_factor, bad_request, untrusted)',
    labelNames: ['outcome'] as const,
    registers: [register],
  });

  return {
    forward(outcome) {
      forwards.inc({ outcome });
    },
    observe(ctx, seconds) {
      const route = routeOf(ctx);
      requests.inc({ route, method: ctx.method, status: String(ctx.status) });
      latency.observe({ route, method: ctx.method }, seconds);
    },
    async handler(ctx) {
      snapshot = await core.metrics(callerOf(ctx));
      ctx.set('Cache-Control', 'no-store');
      ctx.type = register.contentType;
      ctx.body = await register.metrics();
    },
    stop() {
      register.clear();
    },
  };
}
