/**
 * What an operator does from the shell: the same rules as HTTP (validation, hashing, the
 * bootstrap transaction), acting as a principal that passes every permission check.
 */
import { AppError } from '../errors';
import type { Deps } from '../deps';
import type { Principal } from '../permission/check';
import { SIGNUP_CLOSED } from '../permission/bits';
import { AccountRow } from '../store/rows';
import {
  bumpAuthVersion,
  countAdministrators,
  findAccountByEmailKey,
  isAdministrator,
  lockAccounts,
} from '../store/accounts';
import { makeAdministrator } from './bootstrap';
import { createAccount } from './create';
import { normalizeEmail, validateName, validatePassword } from './validate';
import { setActionPermission } from '../store/records-meta';
import { keys, unlock } from '../auth/limits';
import { clear } from '../store/counters';
import { deleteRecoveryCodes } from '../store/totp';

/** The operator at the shell: passes every permission check, owns nothing. */
export const OPERATOR: Principal = Object.freeze({ accountId: null, referenceId: null, groupIds: new Set<number>(), isAdmin: true });

export type BootstrapOutcome = 'created' | 'promoted' | 'unchanged';

export interface AccountView {
  reference_id: string;
  email: string;
  name: string;
  administrator: boolean;
  disabled: boolean;
  email_verified: boolean;
  totp_enabled: boolean;
  created_at: string;
}

export async function findAccountOrThrow(deps: Deps, email: string): Promise<AccountRow> {
  const key = normalizeEmail(email).key;
  const account = await findAccountByEmailKey(deps.store.knex, key);
  if (!account) throw new AppError('not_found', `no account with email ${email.trim()}`);
  return account;
}

/**
 * With no administrator: create the account (or promote an existing one whose password matches),
 * make it an administrator and close guest signup, in one transaction. The same administrator
 * again: nothing changes. Another administrator exists: refused.
 */
export async function bootstrapAdmin(
  deps: Deps,
  input: { email: string; name?: string; password: string },
): Promise<{ outcome: BootstrapOutcome; referenceId: string }> {
  const { email, key } = normalizeEmail(input.email);
  const existing = await findAccountByEmailKey(deps.store.knex, key);
  if (existing) {
    const check = await deps.passwords.verify(input.password, existing.password);
    if (!check.ok) throw new AppError('invalid_credentials', 'an account with this email exists and the password does not match');
    const outcome = await deps.store.transaction(async (trx) => {
      await lockAccounts(trx);
      if (await isAdministrator(trx, existing.id)) return 'unchanged' as const;
      if ((await countAdministrators(trx)) > 0) throw new AppError('forbidden', 'another administrator already exists');
      await makeAdministrator(trx, existing.id);
      await setActionPermission(trx, 'user_account', 'signup', SIGNUP_CLOSED);
      return 'promoted' as const;
    });
    if (outcome !== 'unchanged') await deps.audit.record('bootstrap', { account: existing.reference_id, via: 'cli', outcome });
    return { outcome, referenceId: existing.reference_id };
  }
  if ((await countAdministrators(deps.store.knex)) > 0) throw new AppError('forbidden', 'another administrator already exists');
  const name = validateName(input.name ?? email.split('@')[0]);
  validatePassword(input.password, undefined, key, deps.config.passwordMinLength);
  const created = await createAccount(deps, OPERATOR, { email, emailKey: key, name, password: input.password });
  if (!created.becameAdministrator) {
    // Someone else became the first administrator between our check and our transaction.
    throw new AppError('forbidden', 'another administrator already exists');
  }
  await deps.audit.record('bootstrap', { account: created.referenceId, via: 'cli', outcome: 'created' });
  return { outcome: 'created', referenceId: created.referenceId };
}

export async function viewAccount(deps: Deps, account: AccountRow): Promise<AccountView> {
  return {
    reference_id: account.reference_id,
    email: account.email,
    name: account.name,
    administrator: await isAdministrator(deps.store.knex, account.id),
    disabled: account.disabled,
    email_verified: account.email_verified,
    totp_enabled: account.totp_enabled,
    created_at: new Date(account.created_at).toISOString(),
  };
}

export async function listAccountViews(deps: Deps): Promise<AccountView[]> {
  const db = deps.store.knex;
  const rows = await db('user_account as a')
    .leftJoin(
      db('membership as m').join('usergroup as g', 'g.id', 'm.usergroup_id').where('g.system_role', 'administrators').select('m.account_id').as('adm'),
      'adm.account_id',
      'a.id',
    )
    .select('a.*', 'adm.account_id as admin_of')
    .orderBy('a.id');
  return rows.map((r: Record<string, unknown>) => ({
    reference_id: String(r.reference_id),
    email: String(r.email),
    name: String(r.name),
    administrator: r.admin_of !== null && r.admin_of !== undefined,
    disabled: Boolean(r.disabled),
    email_verified: Boolean(r.email_verified),
    totp_enabled: Boolean(r.totp_enabled),
    created_at: new Date(Number(r.created_at)).toISOString(),
  }));
}

export async function setPassword(deps: Deps, email: string, password: string): Promise<AccountRow> {
  const account = await findAccountOrThrow(deps, email);
  validatePassword(password, undefined, account.email_key, deps.config.passwordMinLength);
  const hash = await deps.passwords.hash(password);
  // A new password ends every session issued under the old one.
  await bumpAuthVersion(deps.store.knex, account.id, { password: hash });
  await deps.audit.record('password_set', { account: account.reference_id, via: 'cli' });
  return account;
}

export async function revokeSessions(deps: Deps, email: string): Promise<AccountRow> {
  const account = await findAccountOrThrow(deps, email);
  await bumpAuthVersion(deps.store.knex, account.id);
  await deps.audit.record('sessions_revoked', { account: account.reference_id, via: 'cli' });
  return account;
}

/** Returns false when the account was already in that state (an idempotent no-op). */
export async function setDisabled(deps: Deps, email: string, disabled: boolean): Promise<{ account: AccountRow; changed: boolean }> {
  const account = await findAccountOrThrow(deps, email);
  const changed = await deps.store.transaction(async (trx) => {
    await lockAccounts(trx);
    const fresh = await findAccountByEmailKey(trx, account.email_key);
    if (!fresh || fresh.disabled === disabled) return false;
    if (disabled && (await isAdministrator(trx, fresh.id)) && (await countAdministrators(trx)) <= 1) {
      throw new AppError('forbidden', 'the last administrator cannot be disabled');
    }
    await bumpAuthVersion(trx, fresh.id, { disabled });
    return true;
  });
  if (changed) await deps.audit.record(disabled ? 'account_disabled' : 'account_enabled', { account: account.reference_id, via: 'cli' });
  return { account, changed };
}

export async function unlockAccount(deps: Deps, email: string): Promise<{ account: AccountRow; cleared: number }> {
  const account = await findAccountOrThrow(deps, email);
  const cleared = await unlock(deps.store.knex, account.email_key, account.reference_id);
  await deps.audit.record('account_unlocked', { account: account.reference_id, via: 'cli' });
  return { account, cleared };
}

export async function resetTotp(deps: Deps, email: string): Promise<{ account: AccountRow; changed: boolean }> {
  const account = await findAccountOrThrow(deps, email);
  const changed = account.totp_enabled || account.totp_secret !== null;
  if (changed) {
    await deps.store.transaction(async (trx) => {
      await bumpAuthVersion(trx, account.id, { totp_enabled: false, totp_secret: null, totp_last_step: null });
      await deleteRecoveryCodes(trx, account.id);
    });
    await clear(deps.store.knex, [keys.totpAccount(account.reference_id)]);
    await deps.audit.record('totp_reset', { account: account.reference_id, via: 'cli' });
  }
  return { account, changed };
}

