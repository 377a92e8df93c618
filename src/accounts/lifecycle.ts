/**
 * What happens to an existing account, whoever asks: disable or enable, a new password, ending
 * every session, clearing lockouts, turning TOTP off. One function per use case; each checks its
 * rule, writes, and audits with the actor's `via`. Only administrators (and the operator at the
 * shell) may act on another account.
 */
import { newPasswordHash, replacePassword } from './replace-password';
import { AppError } from '../errors';
import { requireAdministrator } from '../access/caller';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { AccountRow, findAccountByEmailKey, findAccountById, isAdministrator, lockAccounts, updateAccount, usernameInUse } from '../store/accounts';
import { bumpAuthVersion, disableTotp } from './session-ends';
import { assertNotManaged } from '../managed/managed-by';
import { assertNotLastAdministrator, makeAdministrator, removeAdministrator } from './administrators';
import { normalizeEmail } from './validate';
import { parseUsername } from './usernames';

export async function findAccountByEmail(s: Services, email: string, tx: Tx = s.store.root): Promise<AccountRow> {
  const account = await findAccountByEmailKey(tx, normalizeEmail(email).key);
  if (!account) throw new AppError('not_found', `no account with email ${email.trim()}`);
  return account;
}

export async function reloadAccount(s: Services, id: number): Promise<AccountRow> {
  const account = await findAccountById(s.store.root, id);
  if (!account) throw new AppError('not_found', 'the account no longer exists');
  return account;
}

/**
 * Disables or enables inside the caller's transaction (which holds lockAccounts). Either way
 * every token issued before is refused. Returns false when the account was already so.
 */
export async function applyDisabled(tx: Tx, account: AccountRow, disabled: boolean): Promise<boolean> {
  if (account.disabled === disabled) return false;
  if (disabled) await assertNotLastAdministrator(tx, account.id, 'disabled');
  await bumpAuthVersion(tx, account.id, { disabled });
  return true;
}

export function auditDisabled(s: Services, actor: Actor, account: AccountRow, disabled: boolean): Promise<void> {
  return s.audit.record(disabled ? 'account_disabled' : 'account_enabled', actor, { account: account.reference_id });
}

export async function setDisabled(s: Services, actor: Actor, email: string, disabled: boolean): Promise<{ account: AccountRow; changed: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const { account, changed } = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByEmail(s, email, tx);
    return { account: found, changed: await applyDisabled(tx, found, disabled) };
  });
  if (changed) await auditDisabled(s, actor, account, disabled);
  return { account, changed };
}

/** A new username for an account (administrators and the shell; the account itself through its record). */
export async function setUsername(s: Services, actor: Actor, email: string, raw: string): Promise<{ account: AccountRow; changed: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const username = parseUsername(raw);
  const { account, changed } = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const found = await findAccountByEmail(s, email, tx);
    if (found.username === username) return { account: found, changed: false };
    await assertNotManaged(tx, actor.via, { kind: 'account', id: found.id, part: 'username' });
    if (await usernameInUse(tx, username, found.id)) throw new AppError('name_taken', `the username ${username} is taken`);
    await updateAccount(tx, found.id, { username });
    return { account: { ...found, username }, changed: true };
  });
  if (changed) await s.audit.record('username_changed', actor, { account: account.reference_id });
  return { account, changed };
}

export async function setPassword(s: Services, actor: Actor, email: string, password: string): Promise<AccountRow> {
  requireAdministrator(actor, 'change other accounts');
  const account = await findAccountByEmail(s, email);
  // A new password ends every session issued under the old one, and its lockouts.
  await replacePassword(s, actor, account, await newPasswordHash(s, password, undefined, account.email_key), 'password_set');
  return account;
}

/** Ends every session of an account: the caller's own (sign out everywhere) or, for administrators, anyone's. */
export async function revokeSessions(s: Services, actor: Actor, account: AccountRow): Promise<void> {
  if (account.id !== actor.principal.accountId) requireAdministrator(actor, 'change other accounts');
  await bumpAuthVersion(s.store.root, account.id);
  await s.audit.record('sessions_revoked', actor, { account: account.reference_id });
}

export async function unlockAccount(s: Services, actor: Actor, email: string): Promise<{ account: AccountRow; unlocked: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const account = await findAccountByEmail(s, email);
  const unlocked = await s.limiter.unlock(account.email_key, account.reference_id);
  // Nothing was locked: nothing happened, so nothing to audit.
  if (unlocked) await s.audit.record('account_unlocked', actor, { account: account.reference_id });
  return { account, unlocked };
}

/**
 * Turns the second factor off (its secret, recovery codes and failure count go; sessions end).
 * The caller has checked who may: the account itself after its password and a code, or an
 * administrator. `event` says which (totp_disabled or totp_reset).
 */
export async function turnOffTotp(s: Services, actor: Actor, account: AccountRow, event: 'totp_disabled' | 'totp_reset'): Promise<void> {
  await disableTotp(s.store.root, account.id);
  await s.limiter.clearTotp(account.reference_id);
  await s.audit.record(event, actor, { account: account.reference_id });
}

export async function resetTotp(s: Services, actor: Actor, email: string): Promise<{ account: AccountRow; changed: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const account = await findAccountByEmail(s, email);
  const changed = account.totp_enabled || account.totp_secret !== null;
  if (changed) await turnOffTotp(s, actor, account, 'totp_reset');
  return { account, changed };
}

/** Makes an account an administrator (several are normal), owning what bootstrap gives. */
export async function promote(s: Services, actor: Actor, email: string): Promise<{ account: AccountRow; changed: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const r = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const account = await findAccountByEmail(s, email, tx);
    if (await isAdministrator(tx, account.id)) return { account, changed: false };
    await makeAdministrator(tx, account.id);
    return { account, changed: true };
  });
  if (r.changed) await s.audit.record('administrator_added', actor, { account: r.account.reference_id });
  return r;
}

/** Ends an account's administration; never the last administrator's (409 last_administrator). */
export async function demote(s: Services, actor: Actor, email: string): Promise<{ account: AccountRow; changed: boolean }> {
  requireAdministrator(actor, 'change other accounts');
  const r = await s.store.transaction(async (tx) => {
    await lockAccounts(tx);
    const account = await findAccountByEmail(s, email, tx);
    return { account, changed: await removeAdministrator(tx, account.id) };
  });
  if (r.changed) await s.audit.record('administrator_removed', actor, { account: r.account.reference_id });
  return r;
}
