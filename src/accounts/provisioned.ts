/**
 * What a provisioning service (SCIM) changes about a person, as one use case: several fields at
 * once (username, email, name, externalId, active) in one transaction, checked before anything is
 * written, then audited field by field as the shell's and the console's changes are (so webhooks
 * follow). Deleting is the same rule as the record API's: never the last administrator.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { AuditEvent } from '../audit-events';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import {
  type AccountChanges,
  type AccountRow,
  deleteAccount,
  findAccountByEmailKey,
  findAccountByReference,
  lockAccounts,
  updateAccount,
  usernameInUse,
} from '../store/accounts';
import { assertNotLastAdministrator } from './administrators';
import { applyDisabled } from './lifecycle';
import type { Tx } from '../store/connection';
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

/** Applies the changes that differ from the stored account; returns it as it now is. */
export async function changeProvisioned(s: Services, actor: Actor, referenceId: string, changes: ProvisionedChanges): Promise<AccountRow> {
  requireAdministrator(actor, 'change other accounts');
  const { account, events } = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByReference(tx, referenceId);
    if (!found) throw gone();
    const columns: AccountChanges = {};
    const events: AuditEvent[] = [];
    if (changes.username !== undefined && changes.username !== found.username) {
      if (await usernameInUse(tx, changes.username, found.id)) throw new AppError('name_taken', `the username ${changes.username} is taken`);
      columns.username = changes.username;
      events.push('username_changed');
    }
    if (changes.email !== undefined && changes.email.key !== found.email_key) {
      const holder = await findAccountByEmailKey(tx, changes.email.key);
      if (holder && holder.id !== found.id) throw new AppError('email_taken', 'an account with this email already exists');
      // The service vouches for the address it sends (contract section 19).
      Object.assign(columns, { email: changes.email.email, email_key: changes.email.key, email_verified: true });
      events.push('email_changed');
    } else if (changes.email !== undefined && changes.email.email !== found.email) {
      columns.email = changes.email.email;
    }
    if (changes.name !== undefined && changes.name !== found.name) {
      columns.name = changes.name;
      events.push('name_changed');
    }
    if (changes.externalId !== undefined && changes.externalId !== found.external_id) columns.external_id = changes.externalId;
    if (Object.keys(columns).length > 0) await updateAccount(tx, found.id, columns);
    // Disabling ends every session, refresh token and API key at once (the auth version moves).
    if (changes.active !== undefined && (await applyDisabled(tx, found, !changes.active))) events.push(changes.active ? 'account_enabled' : 'account_disabled');
    const account = await findAccountByReference(tx, referenceId);
    return { account: account!, events };
  });
  for (const event of events) await s.audit.record(event, actor, { account: account.reference_id });
  return account;
}

/**
 * Deletes an account inside the caller's transaction (which holds lockAccounts): never the last
 * administrator; its dedicated group goes with it. Answers the account as it was, for the
 * account_deleted event announced after it is gone (the record API's DELETE and SCIM's).
 */
export async function deleteAccountIn(tx: Tx, account: Pick<AccountRow, 'id' | 'reference_id' | 'email' | 'name'>): Promise<AccountFacts> {
  await assertNotLastAdministrator(tx, account.id, 'deleted');
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
    return deleteAccountIn(tx, found);
  });
  await s.audit.record('account_deleted', actor, { account: about.id }, 'info', about);
}
