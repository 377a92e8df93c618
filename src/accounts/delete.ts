/**
 * Deleting an account: a person their own (`user_account/delete_account`, with the password or a
 * recent sign-in proved again, as a passkey on the page), an administrator anyone's (`gatehouse
 * user delete EMAIL --yes`, the console). One transaction holding the accounts lock checks and
 * writes: never the last administrator; everything hanging off the account goes with it
 * (sessions and their refresh tokens, OIDC grants and tokens, passkeys, TOTP and recovery codes,
 * app passwords, API keys, memberships, its own group, linked identities, one-time tokens, known
 * places), the apps its open sessions signed in to told by back-channel logout. After it commits,
 * the deletion is audited with the account's id only (never its email or name) and announced to
 * webhooks and pushed to SCIM targets through the queue.
 *
 * An account another system manages is deleted there: one a directory source brought (until the
 * directory no longer has the person: the sync disabled it), or one an app provisions over SCIM
 * (it has an externalId). Deleting it here is refused with a reason naming where to delete it,
 * for the person and for administrators, unless an administrator forces it (the `force` option; the
 * source may then bring the person back at its next sync or push).
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { type AccountRow, findAccountById, lockAccounts } from '../store/accounts';
import { assertNotManaged } from '../managed/managed-by';
import { requireAdministrator } from '../access/caller';
import { assertNotLastAdministrator } from './administrators';
import { deleteAccount } from './session-ends';
import { auditRemoved } from './provisioned';
import { confirmPassword } from './acting';
import { assertRecentSignin } from './recent-signin';
import { findAccountByEmail } from './lifecycle';

/** The checks and the write, in the caller's transaction (which holds lockAccounts). */
async function deleteIn(tx: Tx, actor: Actor, account: AccountRow, force: boolean): Promise<void> {
  await assertNotLastAdministrator(tx, account.id, 'deleted');
  if (!force) {
    await assertNotManaged(tx, actor.via, { kind: 'account', id: account.id, part: 'deletion' });
    if (account.external_id !== null) {
      throw new AppError(
        'forbidden',
        actor.principal.accountId === account.id
          ? 'your account is provisioned by your organisation’s directory over SCIM: ask for it to be removed there'
          : 'this account is provisioned over SCIM (it has an externalId): remove the person in the app that provisions it (or force the deletion: {--force})',
        { reason: 'managed_by_scim' },
      );
    }
  }
  await deleteAccount(tx, account.id);
}

async function remove(s: Services, actor: Actor, accountId: number, force: boolean): Promise<void> {
  const about = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    // Read again under the lock: what the checks see is what is deleted.
    const account = await findAccountById(tx, accountId);
    if (!account) throw new AppError('not_found', 'the account no longer exists');
    await deleteIn(tx, actor, account, force);
    return { id: account.reference_id, email: account.email, name: account.name };
  });
  s.sender.nudge();
  // The audit row holds the id; the email and name go only to the webhooks and SCIM targets told of it.
  await auditRemoved(s, actor, about);
}

/**
 * The person's own account. `password`: checked (failures count toward the signin lockout); none:
 * the session must have proved who the person is within --recent-signin (a passkey or password
 * entered again on the page), else 403 reauthentication_required. Never forced.
 */
export async function deleteOwnAccount(s: Services, actor: Actor, account: AccountRow, password: string | null): Promise<void> {
  if (password !== null && password !== '') await confirmPassword({ s, actor }, account, password);
  else await assertRecentSignin(s, actor);
  await remove(s, actor, account.id, false);
}

/** An administrator's (or the shell's) deletion of any account, by email; `force` passes what a directory or SCIM manages. */
export async function deleteAccountByEmail(
  s: Services,
  actor: Actor,
  email: string,
  o: { force?: boolean } = {},
): Promise<{ reference_id: string; email: string }> {
  requireAdministrator(actor, 'delete accounts');
  const account = await findAccountByEmail(s, email);
  await remove(s, actor, account.id, o.force === true);
  return { reference_id: account.reference_id, email: account.email };
}
