/**
 * What a provisioning service (SCIM) changes about a person, as one use case: several fields at
 * once (username, email, name, externalId, active) in one transaction, checked before anything is
 * written, then audited field by field as the shell's and the console's changes are (so webhooks
 * follow). Deleting is the same rule as the record API's: never the last administrator.
 */
import { AppError } from '../errors';
import type { Actor, Via } from '../actor';
import type { AuditEvent } from '../audit-events';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import {
  type AccountChanges,
  type AccountRow,
  emailIsUsername,
  findAccountByEmailKey,
  findAccountByReference,
  isAdministrator,
  lockAccounts,
  updateAccount,
  usernameInUse,
} from '../store/accounts';
import { assertNotLastAdministrator } from './administrators';
import { applyDisabled } from './lifecycle';
import { waysIn } from './ways-in';
import { checkedSkeleton } from './lookalikes';
import { queueMail } from '../deliveries/queue';
import { emailMovedMessage } from '../mail/messages';
import { accountTranslator, type Messages } from '../i18n';
import type { Tx } from '../store/connection';
import { assertNotManaged } from '../managed/managed-by';
import { deleteAccount } from './session-ends';
import type { AccountFacts } from '../deliveries/events';

/** Already validated by the caller (parseUsername, normalizeEmail, validateName). */
export interface ProvisionedChanges {
  username?: string;
  email?: { email: string; key: string };
  name?: string;
  externalId?: string | null;
  active?: boolean;
}

const gone = () => new AppError('not_found', 'the account no longer exists');

/**
 * Administrators are out of a provisioning service's write reach: a SCIM token must never be able
 * to take over the operators (change an administrator's email, then reset its password). Checked
 * in the transaction that writes, under lockAccounts.
 */
export async function assertProvisionable(tx: Tx, actor: Actor, account: Pick<AccountRow, 'id'>): Promise<void> {
  if (actor.via === 'scim' && (await isAdministrator(tx, account.id))) {
    throw new AppError('forbidden', 'this account is an administrator: SCIM does not change administrators (use the shell or the console)', {
      reason: 'scim_may_not_touch_administrators',
    });
  }
}

/** Applies the changes that differ from the stored account; returns it as it now is. */
export async function changeProvisioned(s: Services, actor: Actor, referenceId: string, changes: ProvisionedChanges): Promise<AccountRow> {
  requireAdministrator(actor, 'change other accounts');
  const { account, events } = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByReference(tx, referenceId);
    if (!found) throw gone();
    return changeProvisionedIn(s.messages, tx, actor, found, changes);
  });
  await auditProvisioned(s, actor, account, events);
  return account;
}

/** The audit rows of a change made by changeProvisionedIn, recorded after its transaction committed. */
export async function auditProvisioned(s: Services, actor: Actor, account: Pick<AccountRow, 'reference_id'>, events: readonly AuditEvent[]): Promise<void> {
  for (const event of events) await s.audit.record(event, actor, { account: account.reference_id });
}

/**
 * changeProvisioned inside the caller's transaction, which holds lockAccounts and read `found`
 * in it: the account as it now is and the events to audit once the transaction has committed
 * (auditProvisioned). The old address's notice is in the account's language (`messages`).
 */
export async function changeProvisionedIn(
  messages: Messages,
  tx: Tx,
  actor: Actor,
  found: AccountRow,
  changes: ProvisionedChanges,
): Promise<{ account: AccountRow; events: AuditEvent[] }> {
  requireAdministrator(actor, 'change other accounts');
  await assertProvisionable(tx, actor, found);
  const columns: AccountChanges = {};
  const events: AuditEvent[] = [];
  if (changes.username !== undefined && changes.username !== found.username) {
    if (await usernameInUse(tx, changes.username, found.id)) throw new AppError('name_taken', `the username ${changes.username} is taken`);
    columns.username = changes.username;
    events.push('username_changed');
  }
  if (changes.email !== undefined && (changes.email.key !== found.email_key || changes.email.email !== found.email)) {
    if (changes.email.key !== found.email_key) {
      const holder = await findAccountByEmailKey(tx, changes.email.key);
      if (holder && holder.id !== found.id) throw new AppError('email_taken', 'an account with this email already exists');
      if (await emailIsUsername(tx, changes.email.key, found.id)) throw new AppError('email_taken', 'this email is the username of another account');
      const emailSkeleton = await checkedSkeleton(tx, changes.email.key, { self: found.id, reveal: actor.principal.isAdmin });
      // The service vouches for the address it sends.
      Object.assign(columns, { email_key: changes.email.key, email_skeleton: emailSkeleton, email_verified: true });
    }
    // Another spelling of the same identity (MIKE@ for mıke@) is still another mailbox to a mail
    // server: it is a change like any other. The old address is told, in this transaction, when
    // the account has a way in of its own that mail to the new one could reset.
    columns.email = changes.email.email;
    events.push('email_changed');
    const ways = await waysIn(tx, found);
    if (ways.password || ways.passkeys > 0)
      await queueMail(tx, emailMovedMessage(found.email, found.name, changes.email.email, accountTranslator(messages, found)), 'email_moved');
  }
  if (changes.name !== undefined && changes.name !== found.name) {
    columns.name = changes.name;
    events.push('name_changed');
  }
  if (changes.externalId !== undefined && changes.externalId !== found.external_id) columns.external_id = changes.externalId;
  // A directory source's person: their name, email and username are the directory's.
  if (Object.keys(columns).length > 0) await assertNotManaged(tx, actor.via, { kind: 'account', id: found.id, part: 'profile' });
  if (Object.keys(columns).length > 0) await updateAccount(tx, found.id, columns);
  // Disabling ends every session, refresh token and API key at once (the auth version moves).
  if (changes.active !== undefined && (await applyDisabled(tx, found, !changes.active))) events.push(changes.active ? 'account_enabled' : 'account_disabled');
  const account = await findAccountByReference(tx, found.reference_id);
  return { account: account!, events };
}

/**
 * Deletes an account inside the caller's transaction (which holds lockAccounts): never the last
 * administrator; its dedicated group goes with it. Answers the account as it was, for the
 * account_deleted event announced after it is gone (the record API's DELETE and SCIM's).
 */
export async function deleteAccountIn(tx: Tx, via: Via, account: Pick<AccountRow, 'id' | 'reference_id' | 'email' | 'name'>): Promise<AccountFacts> {
  await assertNotLastAdministrator(tx, account.id, 'deleted');
  await assertNotManaged(tx, via, { kind: 'account', id: account.id, part: 'deletion' });
  await deleteAccount(tx, account.id);
  return { id: account.reference_id, email: account.email, name: account.name };
}

/** Deletes an account by reference id (SCIM's DELETE), audited as account_deleted. */
export async function removeAccount(s: Services, actor: Actor, referenceId: string): Promise<void> {
  requireAdministrator(actor, 'delete accounts');
  const about = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByReference(tx, referenceId);
    if (!found) throw gone();
    return removeAccountIn(tx, actor, found);
  });
  await auditRemoved(s, actor, about);
}

/** removeAccount inside the caller's transaction (which holds lockAccounts): audit with auditRemoved after it commits. */
export async function removeAccountIn(tx: Tx, actor: Actor, found: AccountRow): Promise<AccountFacts> {
  requireAdministrator(actor, 'delete accounts');
  await assertProvisionable(tx, actor, found);
  return deleteAccountIn(tx, actor.via, found);
}

export async function auditRemoved(s: Services, actor: Actor, about: AccountFacts): Promise<void> {
  await s.audit.record('account_deleted', actor, { account: about.id }, 'info', about);
}
