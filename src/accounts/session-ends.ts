/**
 * Back-channel logout's rule (OpenID Connect Back-Channel Logout 1.0): when sessions end, however
 * they end (a sign-out, an auth_version bump, the account deleted), every client they signed in to
 * that asked to be told gets a message in the delivery queue, written in the transaction that ends
 * them. The store's writes that end sessions are reached through these functions only
 * (test/unit/store-stores.test.ts), so none ends a session without telling its clients.
 *
 * Each is handed the root or a transaction; either way the write and its messages commit together.
 * The messages are read after the write (SQLite's write lock is taken first): the sessions are
 * named by what that write did.
 */
import type { Tx } from '../store/connection';
import { inOneTransaction } from '../store/handle';
import { bumpAuthVersion as bump, deleteAccount as remove, type AccountChanges } from '../store/accounts';
import { endSession as end } from '../store/sessions';
import { disableTotp as totpOff, enableTotp as totpOn } from '../store/totp';
import { endingSignins, type Ending } from '../store/logout';
import { queueLogouts } from '../deliveries/queue';

const tell = async (tx: Tx, accountId: number, ending: Ending): Promise<void> => {
  await queueLogouts(tx, await endingSignins(tx, accountId, ending));
};

/** Ends one session of the account; false if there was no such open session (and nobody is told). */
export const endSession = (tx: Tx, accountId: number, sessionId: string): Promise<boolean> =>
  inOneTransaction(tx, async (t) => {
    const ended = await end(t, accountId, sessionId);
    if (ended) await tell(t, accountId, { session: sessionId });
    return ended;
  });

/** Sets columns and invalidates every token issued so far: every session the account had ends. */
export const bumpAuthVersion = (tx: Tx, accountId: number, fields: AccountChanges = {}): Promise<void> =>
  inOneTransaction(tx, async (t) => {
    await bump(t, accountId, fields);
    await tell(t, accountId, { bumped: true });
  });

/** Deletes the account (and its dedicated group): its open sessions go with it, their clients told first. */
export const deleteAccount = (tx: Tx, accountId: number): Promise<void> =>
  inOneTransaction(tx, async (t) => {
    await tell(t, accountId, { open: true });
    await remove(t, accountId);
  });

/** Turns a pending TOTP enrolment on (once, for the secret shown): the sessions the bump ends are told of. */
export const enableTotp = (tx: Tx, accountId: number, secret: string, step: number): Promise<boolean> =>
  inOneTransaction(tx, async (t) => {
    const on = await totpOn(t, accountId, secret, step);
    if (on) await tell(t, accountId, { bumped: true });
    return on;
  });

/** Turns TOTP off and drops its recovery codes: the sessions the bump ends are told of. */
export const disableTotp = (tx: Tx, accountId: number): Promise<void> =>
  inOneTransaction(tx, async (t) => {
    await totpOff(t, accountId);
    await tell(t, accountId, { bumped: true });
  });
