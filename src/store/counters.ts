/**
 * Fixed-window counters in the store (they survive restarts and are shared by every instance).
 * One atomic upsert per hit: no read-modify-write race between requests or instances.
 */
import type { Db } from './connection';

export interface Count {
  hits: number;
  /** Epoch ms when the current window started. */
  windowStart: number;
}

export async function hit(db: Db, key: string, windowMs: number, now = Date.now()): Promise<Count> {
  const expiredBefore = now - windowMs;
  const result = await db.raw(
    `INSERT INTO rate_counter (counter_key, window_start, hits) VALUES (?, ?, 1)
     ON CONFLICT (counter_key) DO UPDATE SET
       hits = CASE WHEN rate_counter.window_start <= ? THEN 1 ELSE rate_counter.hits + 1 END,
       window_start = CASE WHEN rate_counter.window_start <= ? THEN excluded.window_start ELSE rate_counter.window_start END
     RETURNING hits, window_start`,
    [key, now, expiredBefore, expiredBefore],
  );
  const row = (Array.isArray(result) ? result[0] : result.rows[0]) as { hits: number | string; window_start: number | string };
  return { hits: Number(row.hits), windowStart: Number(row.window_start) };
}

/** The current count (0 when the window has passed). */
export async function peek(db: Db, key: string, windowMs: number, now = Date.now()): Promise<Count> {
  const row = await db('rate_counter').where({ counter_key: key }).first('hits', 'window_start');
  if (!row || Number(row.window_start) <= now - windowMs) return { hits: 0, windowStart: now };
  return { hits: Number(row.hits), windowStart: Number(row.window_start) };
}

export async function clear(db: Db, keys: readonly string[]): Promise<number> {
  return db('rate_counter').whereIn('counter_key', [...keys]).del();
}

/** Drops counters whose window ended long ago (called periodically by a running server). */
export async function prune(db: Db, olderThanMs: number, now = Date.now()): Promise<number> {
  return db('rate_counter').where('window_start', '<', now - olderThanMs).del();
}
