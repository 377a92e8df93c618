/** Queries on accounts, groups and memberships. */
import { randomUUID } from 'node:crypto';
import type { Db } from './connection';
import { AccountRow, normalizeRow } from './rows';

export type SystemRole = 'administrators' | 'users';

/** What an authenticated request needs, in one query: version, state, groups, admin-ness. */
export interface AuthFacts {
  id: number;
  referenceId: string;
  authVersion: number;
  disabled: boolean;
  groupIds: Set<number>;
  isAdmin: boolean;
}

export async function findAccountByEmailKey(db: Db, emailKey: string): Promise<AccountRow | undefined> {
  const raw = await db('user_account').where({ email_key: emailKey }).first();
  return raw ? normalizeRow<AccountRow>(raw) : undefined;
}

export async function findAccountById(db: Db, id: number): Promise<AccountRow | undefined> {
  const raw = await db('user_account').where({ id }).first();
  return raw ? normalizeRow<AccountRow>(raw) : undefined;
}

async function insertReturningId(db: Db, table: string, row: Record<string, unknown>): Promise<number> {
  const [inserted] = await db(table).insert(row).returning('id');
  return Number(typeof inserted === 'object' ? inserted.id : inserted);
}

export async function insertAccount(
  db: Db,
  fields: { email: string; emailKey: string; name: string; passwordHash: string; permission: number },
): Promise<{ id: number; referenceId: string }> {
  const now = Date.now();
  const referenceId = randomUUID();
  const id = await insertReturningId(db, 'user_account', {
    reference_id: referenceId,
    email: fields.email,
    email_key: fields.emailKey,
    name: fields.name,
    password: fields.passwordHash,
    permission: fields.permission,
    created_at: now,
    updated_at: now,
  });
  // An account owns its own row.
  await db('user_account').where({ id }).update({ user_account_id: id });
  return { id, referenceId };
}

export async function insertGroup(
  db: Db,
  fields: { name: string; ownerId: number | null; permission: number },
): Promise<{ id: number; referenceId: string }> {
  const now = Date.now();
  const referenceId = randomUUID();
  const id = await insertReturningId(db, 'usergroup', {
    reference_id: referenceId,
    name: fields.name,
    permission: fields.permission,
    user_account_id: fields.ownerId,
    created_at: now,
    updated_at: now,
  });
  return { id, referenceId };
}

export async function addMembership(db: Db, accountId: number, groupId: number, permission: number): Promise<void> {
  const now = Date.now();
  await db('membership')
    .insert({
      reference_id: randomUUID(),
      account_id: accountId,
      usergroup_id: groupId,
      permission,
      user_account_id: accountId,
      created_at: now,
      updated_at: now,
    })
    .onConflict(['account_id', 'usergroup_id'])
    .ignore();
}

export async function systemGroupId(db: Db, role: SystemRole): Promise<number> {
  const row = await db('usergroup').where({ system_role: role }).first('id');
  if (!row) throw new Error(`system group ${role} is missing: the store was not migrated`);
  return Number(row.id);
}

export async function countAdministrators(db: Db): Promise<number> {
  const row = await db('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where('g.system_role', 'administrators')
    .count({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}

export async function isAdministrator(db: Db, accountId: number): Promise<boolean> {
  const row = await db('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where({ 'g.system_role': 'administrators', 'm.account_id': accountId })
    .first('m.id');
  return row !== undefined;
}

export async function updateAccount(db: Db, id: number, fields: Partial<Omit<AccountRow, 'id' | 'reference_id'>>): Promise<void> {
  await db('user_account')
    .where({ id })
    .update({ ...fields, updated_at: Date.now() });
}

/** Invalidates every token issued so far for the account. */
export async function bumpAuthVersion(db: Db, id: number, extra: Partial<Omit<AccountRow, 'id' | 'reference_id'>> = {}): Promise<void> {
  await db('user_account')
    .where({ id })
    .update({ ...extra, auth_version: db.raw('auth_version + 1'), updated_at: Date.now() });
}

/**
 * Serializes account writes: SQLite takes its write lock here (not at a later read→write
 * upgrade, which would fail at once with SQLITE_BUSY), PostgreSQL takes a row lock.
 */
export async function lockAccounts(db: Db): Promise<void> {
  await db('write_lock').where({ name: 'accounts' }).update({ counter: db.raw('counter + 1') });
}
