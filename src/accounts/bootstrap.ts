/**
 * The bootstrap rule: while no administrator exists, the first account becomes one, and in the
 * same transaction guest signup closes (2097025). Callers hold lockAccounts(), so two concurrent
 * "first" accounts cannot both see zero administrators.
 */
import type { Db } from '../store/connection';
import { addMembership, countAdministrators, systemGroupId } from '../store/accounts';
import { setActionPermission } from '../store/records-meta';
import { SIGNUP_CLOSED } from '../permission/bits';

const ADMIN_MEMBERSHIP_PERMISSION = 2432 + 49152; // owner peek/read/delete, group peek/read

export async function makeAdministrator(trx: Db, accountId: number): Promise<void> {
  await addMembership(trx, accountId, await systemGroupId(trx, 'administrators'), ADMIN_MEMBERSHIP_PERMISSION);
}

/** Returns true when `accountId` became the first administrator. */
export async function claimFirstAdministrator(trx: Db, accountId: number): Promise<boolean> {
  if ((await countAdministrators(trx)) > 0) return false;
  await makeAdministrator(trx, accountId);
  await setActionPermission(trx, 'user_account', 'signup', SIGNUP_CLOSED);
  await trx('action')
    .where({ on_type: 'user_account', action_name: 'signup' })
    .update({ user_account_id: accountId });
  return true;
}
