/**
 * Fixed-window counters in the store (they survive restarts and are shared by every instance).
 * One atomic upsert per hit: no read-modify-write race between requests or instances.
 */
import { op, rawRows } from './handle';

export interface Count {
  hits: number;
  /** Epoch ms when the current window started. */
  windowStart: number;
}

export const hit = op(async (h, key: string, windowMs: number): Promise<Count> => {
  const now = h.clock.now();
  const expiredBefore = now - windowMs;
  const [row] = await rawRows(
    h.k,
    `INSERT INTO rate_counter (counter_key, window_start, hits) VALUES (?, ?, 1)
     ON CONFLICT (counter_key) DO UPDATE SET
       hits = CASE WHEN rate_counter.window_start <= ? THEN 1 ELSE rate_counter.hits + 1 END,
       window_start = CASE WHEN rate_counter.window_start <= ? THEN excluded.window_start ELSE rate_counter.window_start END
     RETURNING hits, window_start`,
    [key, now, expiredBefore, expiredBefore],
  );
  return { hits: Number(row.hits), windowStart: Number(row.window_start) };
});

/**
 * Takes one of `limit` attempts in the key's window by one conditional write: the count after it,
 * or null when the window's attempts are all taken (nothing is written then). The check and the
 * write it guards are one statement, so requests at once (or instances) never take more than `limit`.
 */
export const take = op(async (h, key: string, windowMs: number, limit: number): Promise<Count | null> => {
  const now = h.clock.now();
  const expiredBefore = now - windowMs;
  const rows = await h.claim(
    `INSERT INTO rate_counter (counter_key, window_start, hits) VALUES (?, ?, 1)
     ON CONFLICT (counter_key) DO UPDATE SET
       hits = CASE WHEN rate_counter.window_start <= ? THEN 1 ELSE rate_counter.hits + 1 END,
       window_start = CASE WHEN rate_counter.window_start <= ? THEN excluded.window_start ELSE rate_counter.window_start END
     WHERE rate_counter.window_start <= ? OR rate_counter.hits < ?
     RETURNING hits, window_start`,
    [key, now, expiredBefore, expiredBefore, expiredBefore, limit],
  );
  if (rows.length === 0) return null;
  return { hits: Number(rows[0].hits), windowStart: Number(rows[0].window_start) };
});

/** Gives back an attempt taken by `take` (one that succeeded), if its window is still the current one. */
export const giveBack = op(async (h, key: string, windowStart: number): Promise<void> => {
  await h.claim('UPDATE rate_counter SET hits = hits - 1 WHERE counter_key = ? AND window_start = ? AND hits > 0 RETURNING hits', [key, windowStart]);
});

/** The current counts of several keys in one read, in the order asked (0 where the window has passed). */
export const peekMany = op(async (h, keys: readonly string[], windowMs: number): Promise<Count[]> => {
  const now = h.clock.now();
  const rows = await h.all(`SELECT counter_key, hits, window_start FROM rate_counter WHERE counter_key IN (${keys.map(() => '?').join(', ')})`, [...keys]);
  const byKey = new Map(rows.map((r) => [String(r.counter_key), r]));
  return keys.map((key) => {
    const row = byKey.get(key);
    if (!row || Number(row.window_start) <= now - windowMs) return { hits: 0, windowStart: now };
    return { hits: Number(row.hits), windowStart: Number(row.window_start) };
  });
});

/** The current count (0 when the window has passed). */
export const peek = op(async (h, key: string, windowMs: number): Promise<Count> => {
  const now = h.clock.now();
  const row = await h.k('rate_counter').where({ counter_key: key }).first('hits', 'window_start');
  if (!row || Number(row.window_start) <= now - windowMs) return { hits: 0, windowStart: now };
  return { hits: Number(row.hits), windowStart: Number(row.window_start) };
});

export const clear = op(async (h, keys: readonly string[]): Promise<number> =>
  h
    .k('rate_counter')
    .whereIn('counter_key', [...keys])
    .del(),
);

/** Clears every counter whose key starts with `prefix` (LIKE wildcards in it are escaped). */
export const clearPrefix = op(async (h, prefix: string): Promise<number> =>
  h
    .k('rate_counter')
    .whereRaw("counter_key LIKE ? ESCAPE '\\'", [likePrefix(prefix)])
    .del(),
);

function likePrefix(prefix: string): string {
  return prefix.replace(/[\\%_]/g, '\\$&') + '%';
}

/** Drops counters whose window ended long ago (called periodically by a running server). */
export const prune = op(async (h, olderThanMs: number): Promise<number> =>
  h
    .k('rate_counter')
    .where('window_start', '<', h.clock.now() - olderThanMs)
    .del(),
);

/** Accounts (by email key) whose failed-signin counter reached `limit` in the current window. */
export const countLockedAccounts = op(async (h, prefix: string, limit: number, windowMs: number): Promise<number> => {
  const [row] = await h.all(
    `SELECT COUNT(*) AS n FROM user_account a JOIN rate_counter c ON c.counter_key = ? || a.email_key
     WHERE c.hits >= ? AND c.window_start > ?`,
    [prefix, limit, h.clock.now() - windowMs],
  );
  return Number(row?.n ?? 0);
});

/** Records a successful signin of the account (by email key) from `signinKey` (an address group). */
export const rememberSignin = op(async (h, emailKey: string, signinKey: string): Promise<void> => {
  const now = h.clock.now();
  await rawRows(
    h.k,
    `INSERT INTO known_signin (account_id, signin_key, last_at) SELECT id, ?, ? FROM user_account WHERE email_key = ?
     ON CONFLICT (account_id, signin_key) DO UPDATE SET last_at = excluded.last_at RETURNING account_id`,
    [signinKey, now, emailKey],
  );
});

/** Whether the account (by email key) signed in from `signinKey` within `withinMs`. */
export const knownSignin = op(async (h, emailKey: string, signinKey: string, withinMs: number): Promise<boolean> => {
  const rows = await h.all(
    `SELECT 1 AS one FROM known_signin k JOIN user_account a ON a.id = k.account_id WHERE a.email_key = ? AND k.signin_key = ? AND k.last_at > ?`,
    [emailKey, signinKey, h.clock.now() - withinMs],
  );
  return rows.length > 0;
});

/**
 * What a successful sign-in asks, in one read on the read pool: whether a counter has failures in
 * its window (the pair to clear), and whether the account signed in from `signinKey` within
 * `withinMs` (the place to remember).
 */
export const failuresAndKnown = op(
  async (h, key: string, windowMs: number, emailKey: string, signinKey: string, withinMs: number): Promise<{ failures: boolean; known: boolean }> => {
    const now = h.clock.now();
    const [row] = await h.all(
      `SELECT EXISTS (SELECT 1 FROM rate_counter WHERE counter_key = ? AND window_start > ? AND hits > 0) AS failures,
              EXISTS (SELECT 1 FROM known_signin k JOIN user_account a ON a.id = k.account_id
                      WHERE a.email_key = ? AND k.signin_key = ? AND k.last_at > ?) AS known`,
      [key, now - windowMs, emailKey, signinKey, now - withinMs],
    );
    const yes = (v: unknown) => v === true || Number(v) === 1;
    return { failures: yes(row?.failures), known: yes(row?.known) };
  },
);

/** Forgets places not signed in from for `olderThanMs`. */
export const pruneKnownSignins = op(async (h, olderThanMs: number): Promise<number> =>
  h
    .k('known_signin')
    .where('last_at', '<', h.clock.now() - olderThanMs)
    .del(),
);

/**
 * A sign-in's browser and place (`signinKey`, hashed by the caller) for the new-sign-in mail:
 * `known` when the account used it within `withinMs` (its time moved at most once per
 * `touchEveryMs`), else recorded now by one conditional write: `new` for the one request whose
 * write recorded it (two sign-ins at once from one new browser: one mail), `first` when the
 * account had no other (its first sign-in under this rule, told to nobody).
 */
export const notePlace = op(async (h, accountId: number, signinKey: string, withinMs: number, touchEveryMs: number): Promise<'known' | 'new' | 'first'> => {
  const now = h.clock.now();
  const [row] = await h.all('SELECT last_at FROM known_signin WHERE account_id = ? AND signin_key = ?', [accountId, signinKey]);
  if (row && Number(row.last_at) > now - withinMs) {
    if (Number(row.last_at) < now - touchEveryMs) {
      await h.batch((b) =>
        b.run('UPDATE known_signin SET last_at = ? WHERE account_id = ? AND signin_key = ? AND last_at < ?', [now, accountId, signinKey, now - touchEveryMs]),
      );
    }
    return 'known';
  }
  const won = await h.claim(
    `INSERT INTO known_signin (account_id, signin_key, last_at) VALUES (?, ?, ?)
       ON CONFLICT (account_id, signin_key) DO UPDATE SET last_at = excluded.last_at WHERE known_signin.last_at <= ?
       RETURNING account_id`,
    [accountId, signinKey, now, now - withinMs],
  );
  if (won.length === 0) return 'known';
  const others = await h.all(`SELECT 1 AS one FROM known_signin WHERE account_id = ? AND signin_key LIKE 'seen:%' AND signin_key <> ? LIMIT 1`, [
    accountId,
    signinKey,
  ]);
  return others.length > 0 ? 'new' : 'first';
});
