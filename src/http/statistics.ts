/** GET /statistics: the core's figures plus this server's own (requests, latency, event loop, memory). */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Context } from 'koa';
import type { Core } from '../core';
import { callerOf } from './caller';

export interface WebStats {
  startedAt: number;
  requests: number;
  byStatus: Record<string, number>;
  totalLatencyMs: number;
  loop: ReturnType<typeof startLoopMonitor>;
}

const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : 0);

/** Event-loop delay, sampled continuously while a server runs. */
function startLoopMonitor() {
  const resolutionMs = 10;
  const h = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  // The histogram holds the time between timer ticks, which includes the resolution itself.
  const lag = (ns: number) => round(Math.max(0, ns / 1e6 - resolutionMs));
  return {
    read: () => ({ mean_ms: lag(h.mean), p99_ms: lag(h.percentile(99)), max_ms: lag(h.max) }),
    stop: () => h.disable(),
  };
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
    const figures = await core.statistics(callerOf(ctx));
    const m = process.memoryUsage();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      web: {
        uptime_s: Math.round((Date.now() - web.startedAt) / 1000),
        requests: web.requests,
        by_status: { ...web.byStatus },
        mean_latency_ms: web.requests ? round(web.totalLatencyMs / web.requests) : 0,
      },
      ...figures,
      process: { rss_bytes: m.rss, heap_used_bytes: m.heapUsed, uptime_s: Math.round(process.uptime()), event_loop: web.loop.read() },
    };
  };
}
