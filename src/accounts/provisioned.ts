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

/** Deletes an account (its dedicated group goes with it); never the last administrator. */
export async function removeAccount(s: Services, actor: Actor, referenceId: string): Promise<void> {
  requireAdministrator(actor, 'delete accounts');
  const account = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByReference(tx, referenceId);
    if (!found) throw gone();
    await assertNotLastAdministrator(tx, found.id, 'deleted');
    await deleteAccount(tx, found.id);
    return found;
  });
  // The account is gone when the event is announced: its address and name travel with it.
  await s.audit.record('account_deleted', actor, { account: account.reference_id }, 'info', {
    id: account.reference_id,
    email: account.email,
    name: account.name,
  });
}
