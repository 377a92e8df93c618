/**
 * POSIX numbers (contract section 25): one counter, shared by accounts and groups, that only
 * grows. A number is taken inside the transaction that makes the account or the group (one
 * conditional write on the counter's row: PostgreSQL holds the row until that transaction ends,
 * SQLite has one writer), so two instances making accounts at once never give one twice, and a
 * number once given is never given again, whatever is deleted later.
 */
import { atomically, op } from './handle';

/** The counter as it stands. */
export interface PosixCounter {
  base: number;
  next: number;
  /** The lowest number ever given; null: none. */
  low: number | null;
}

export const readPosixCounter = op(async (h): Promise<PosixCounter> => {
  const [row] = await h.all(`SELECT base, next_id, low FROM posix_counter WHERE name = 'posix'`, []);
  return { base: Number(row.base), next: Number(row.next_id), low: row.low === null ? null : Number(row.low) };
});

/**
 * Numbers never given: 65534 is `nobody` (and `nogroup`) on every Linux host, 65535 the 16-bit
 * (uid_t)-1 that some system calls read as "no user". The counter steps over them (and the base
 * may not be one, directory/operations.ts), so the next number is never one of them.
 */
export const NEVER_GIVEN: readonly number[] = [65534, 65535];

/** The next number, taken: call it inside the transaction that stores it. */
export const takePosixId = op(async (h): Promise<number> => {
  // Never 65534 or 65535: the counter is moved past them before and after the take (the first
  // write takes PostgreSQL's row lock, so the three are one step for every instance).
  const past = `UPDATE posix_counter SET next_id = 65536 WHERE name = 'posix' AND next_id IN (65534, 65535)`;
  await h.run(past, []);
  const [row] = await h.claim(
    `UPDATE posix_counter SET next_id = next_id + 1, low = COALESCE(low, next_id) WHERE name = 'posix' RETURNING next_id - 1 AS given`,
    [],
  );
  await h.run(past, []);
  return Number(row.given);
});

/**
 * Moves the counter to a new base, in one transaction with the read that decides: the same base
 * changes nothing; another is taken when no number was given yet or it stands past every number
 * given. Returns the counter after, or the counter that refused it (`refused`).
 */
export const movePosixBase = op(async (h, base: number): Promise<{ counter: PosixCounter; refused: boolean }> =>
  atomically(h, async (t) => {
    // The write first: it takes PostgreSQL's row lock (and SQLite's write lock) before the read decides.
    await t.run(`UPDATE posix_counter SET base = base WHERE name = 'posix'`, []);
    const [row] = await t.all(`SELECT base, next_id, low FROM posix_counter WHERE name = 'posix'`, []);
    const counter = { base: Number(row.base), next: Number(row.next_id), low: row.low === null ? null : Number(row.low) };
    if (counter.base === base) return { counter, refused: false };
    if (counter.low !== null && base < counter.next) return { counter, refused: true };
    await t.run(`UPDATE posix_counter SET base = ?, next_id = ? WHERE name = 'posix'`, [base, Math.max(base, counter.low === null ? base : counter.next)]);
    return { counter: { ...counter, base, next: Math.max(base, counter.low === null ? base : counter.next) }, refused: false };
  }),
);
