/**
 * Administrators: who becomes one, and the rule that the last one stays. Every path (bootstrap,
 * signup of the first account, become_an_administrator, the record API, the shell) uses these,
 * inside a transaction that holds lockAccounts, so two "first" accounts cannot both see zero.
 */
import { AppError } from '../errors';
import { SIGNUP_CLOSED } from '../permission/bits';
import type { Tx } from '../store/connection';
import {
  addMembership,
  countAdministrators,
  enabledAdministratorsBesides,
  isAdministrator,
  otherAdministrator,
  removeMembership,
  systemGroupId,
} from '../store/accounts';
import { actionOwner, setActionOwner, setActionPermission } from '../store/records';
import { unnestOwnedFromManaged } from '../store/groups';

const ADMIN_MEMBERSHIP_PERMISSION = 2432 + 49152; // owner peek/read/delete, group peek/read

/** Makes an account an administrator, owning the signup action as the first one does. */
export async function makeAdministrator(tx: Tx, accountId: number): Promise<void> {
  await addMembership(tx, accountId, await systemGroupId(tx, 'administrators'), ADMIN_MEMBERSHIP_PERMISSION);
  await setActionOwner(tx, 'user_account', 'signup', accountId);
}

/**
 * While no administrator exists, `accountId` becomes the first one and guest signup closes
 * (2097025), in the caller's transaction. Returns false when an administrator already exists.
 */
export async function claimFirstAdministrator(tx: Tx, accountId: number): Promise<boolean> {
  if ((await countAdministrators(tx)) > 0) return false;
  await makeAdministrator(tx, accountId);
  await setActionPermission(tx, 'user_account', 'signup', SIGNUP_CLOSED);
  return true;
}

/**
 * Refuses to let the last administrator go (disabled, deleted, demoted): 409 last_administrator.
 * The last one who can sign in: disabled administrators do not count.
 */
export async function assertNotLastAdministrator(tx: Tx, accountId: number, what: string): Promise<void> {
  if ((await isAdministrator(tx, accountId)) && (await enabledAdministratorsBesides(tx, accountId)) === 0) {
    throw new AppError('last_administrator', `the last administrator cannot be ${what}`);
  }
}

/**
 * Ends an account's administration (not the last one's). The signup action's ownership moves to
 * another administrator: a former administrator must keep no owner bits on it (owner execute
 * would let it create accounts while guest signup is closed). Returns false if it was none.
 */
export async function removeAdministrator(tx: Tx, accountId: number): Promise<boolean> {
  if (!(await isAdministrator(tx, accountId))) return false;
  await assertNotLastAdministrator(tx, accountId, 'demoted');
  await removeMembership(tx, accountId, await systemGroupId(tx, 'administrators'));
  // Its groups are no longer managed: out of the managed groups they were inside.
  await unnestOwnedFromManaged(tx, accountId);
  if ((await actionOwner(tx, 'user_account', 'signup')) === accountId) {
    const heir = await otherAdministrator(tx, accountId);
    if (heir !== null) await setActionOwner(tx, 'user_account', 'signup', heir);
  }
  return true;
}
