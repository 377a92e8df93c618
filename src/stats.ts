/** Figures for GET /statistics and `gatehouse stats`: counts from the store, none of its secrets. */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Core } from './core';
import { schemaVersion } from './store/connection';

export async function accountStats(core: Core) {
  const db = core.store.knex;
  const one = async (q: ReturnType<typeof db>) => Number((await q.count({ n: '*' }).first())?.n ?? 0);
  const [total, administrators, withTotp, unverified, disabled] = await Promise.all([
    one(db('user_account')),
    one(db('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators')),
    one(db('user_account').where({ totp_enabled: true })),
    one(db('user_account').where({ email_verified: false })),
    one(db('user_account').where({ disabled: true })),
  ]);
  // Accounts whose failed signins reached the limit in the current window.
  const { limits } = core.config;
  const locked = await one(
    db('user_account as a')
      .join('rate_counter as c', 'c.counter_key', db.raw(`? || a.email_key`, ['signin_email:']))
      .where('c.hits', '>=', limits.signinFailuresPerAccount)
      .where('c.window_start', '>', Date.now() - limits.windowSeconds * 1000),
  );
  return { total, administrators, with_totp: withTotp, unverified, disabled, locked };
}

export async function dbStats(core: Core) {
  const version = await schemaVersion(core.store.knex);
  const pool = core.store.knex.client.pool as { numUsed(): number; numFree(): number; numPendingAcquires(): number } | undefined;
  return {
    dialect: core.store.dialect,
    schema_version: version.current,
    schema_latest: version.latest,
    pool: pool ? { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() } : null,
  };
}

/** Event-loop delay, sampled continuously while a server runs. */
export function startLoopMonitor() {
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

export function processStats() {
  const m = process.memoryUsage();
  return { rss_bytes: m.rss, heap_used_bytes: m.heapUsed, uptime_s: Math.round(process.uptime()) };
}

const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : 0);
