/** GET /statistics: administrators only unless --public-statistics. No paths, env or secrets. */
import type { Context } from 'koa';
import type { Core } from '../core';
import { denied } from '../errors';
import { authenticate } from '../auth/authenticate';
import { accountStats, dbStats, processStats, startLoopMonitor } from '../stats';

export interface WebStats {
  startedAt: number;
  requests: number;
  byStatus: Record<string, number>;
  totalLatencyMs: number;
  loop: ReturnType<typeof startLoopMonitor>;
}

export function createWebStats(): WebStats {
  return { startedAt: Date.now(), requests: 0, byStatus: {}, totalLatencyMs: 0, loop: startLoopMonitor() };
}

export function recordRequest(web: WebStats, status: number, ms: number): void {
  web.requests++;
  web.byStatus[status] = (web.byStatus[status] ?? 0) + 1;
  web.totalLatencyMs += ms;
}

export function statisticsHandler(core: Core, web: WebStats) {
  return async (ctx: Context) => {
    if (!core.config.publicStatistics) {
      const principal = await authenticate(core, ctx.get('authorization') || undefined);
      if (!principal.isAdmin) throw denied(principal.accountId === null, 'read statistics');
    }
    const [accounts, db] = await Promise.all([accountStats(core), dbStats(core)]);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      web: {
        uptime_s: Math.round((Date.now() - web.startedAt) / 1000),
        requests: web.requests,
        by_status: { ...web.byStatus },
        mean_latency_ms: web.requests ? Math.round((web.totalLatencyMs / web.requests) * 100) / 100 : 0,
      },
      db,
      accounts,
      auth: {
        signins_ok: core.counters.signinsOk,
        signins_failed: core.counters.signinsFailed,
        signups: core.counters.signups,
        hashes_queued: core.passwords.queued,
      },
      process: { ...processStats(), event_loop: web.loop.read() },
    };
  };
}
