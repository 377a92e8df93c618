/**
 * The passkeys domain's operations, as the front ends call them: a caller's own passkeys (the
 * account page) and any account's (administrators and the shell). The last passkey of an account
 * without a password cannot be removed: it would leave no way in.
 */
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { findAccountByEmail } from '../accounts/lifecycle';
import type { AccountRow } from '../store/accounts';
import { deletePasskey, passkeysOf } from '../store/passkeys';
import { recency } from '../accounts/recent-signin';
import { assertKeepsAWayIn, hasPassword } from '../accounts/ways-in';
import { ownAccount } from '../accounts/acting';
import { viewPasskey, type PasskeyView } from './views';

export type { PasskeyView } from './views';

export interface PasskeyOperations {
  /**
   * The caller's passkeys, whether the account has a password beside them, and whether its
   * session signed in recently enough (--recent-signin) to add one without confirming it is them.
   */
  mine(caller: Caller): Promise<{ passkeys: PasskeyView[]; hasPassword: boolean; recent: boolean; recovery: boolean }>;
  removeMine(caller: Caller, id: string): Promise<PasskeyView>;
  /** Administrators and the shell: an account's passkeys. */
  list(actor: Actor, email: string): Promise<PasskeyView[]>;
  remove(actor: Actor, email: string, id: string): Promise<PasskeyView>;
}

export function passkeyOperations(s: Services): PasskeyOperations {
  const one = async (account: AccountRow, id: string) => {
    const found = (await passkeysOf(s.store.root, account.id)).find((p) => p.reference_id === id);
    if (!found) throw new AppError('not_found', 'no such passkey');
    return found;
  };
  const remove = async (actor: Actor, account: AccountRow, id: string): Promise<PasskeyView> => {
    const found = await one(account, id);
    const removed = await s.store.transaction(async (tx) => {
      // Counted in the transaction: two removals racing cannot both take "one of two".
      // (A linked sign-in through another provider is a way in too.)
      await assertKeepsAWayIn(tx, account, 'passkey');
      return deletePasskey(tx, account.id, id);
    });
    if (!removed) throw new AppError('not_found', 'no such passkey');
    await s.audit.record('passkey_removed', actor, { account: account.reference_id, passkey: id });
    return viewPasskey(found);
  };
  return {
    async mine(caller) {
      const { actor, account } = await ownAccount(s, caller, { change: false });
      return {
        passkeys: (await passkeysOf(s.store.root, account.id)).map(viewPasskey),
        hasPassword: hasPassword(account),
        recent: (await recency(s, actor, s.store.root, 'passkey')) === 'recent',
        // A recovery link's session: it may add a passkey or a password, and nothing else.
        recovery: actor.principal.recovering === true,
      };
    },
    async removeMine(caller, id) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      return remove(actor, account, id);
    },
    async list(actor, email) {
      requireAdministrator(actor, "read other accounts' passkeys");
      const account = await findAccountByEmail(s, email);
      return (await passkeysOf(s.store.root, account.id)).map(viewPasskey);
    },
    async remove(actor, email, id) {
      requireAdministrator(actor, "remove other accounts' passkeys");
      return remove(actor, await findAccountByEmail(s, email), id);
    },
  };
}
