/**
 * The record API's rules: list needs table peek and returns only readable rows; get needs row
 * read; create needs table create; update/delete need table and row update/delete. Rows the
 * caller may not read are "not found", so their existence does not leak.
 */
import { AppError, denied } from '../errors';
import type { Deps } from '../deps';
import { can, Guarded, isGuest, Principal } from '../permission/check';
import { Operation, parsePermission } from '../permission/bits';
import { createAccount, parseNewAccount } from '../accounts/create';
import { validateName } from '../accounts/validate';
import type { Db } from '../store/connection';
import { fetchOneGuarded, GuardedRow } from '../store/guards';
import { bumpAuthVersion, countAdministrators, insertGroup, isAdministrator, lockAccounts } from '../store/accounts';
import { loadWorld } from '../store/records-meta';
import { listReadable, readGuarded } from '../store/hot';
import type { Store } from '../store/connection';
import { normalizeRow } from '../store/rows';
import { parseListParams } from './query';
import { RecordType } from './types';

type Row = Record<string, unknown> & { id: number; permission: number; user_account_id: number | null };

export interface RecordPage {
  rows: Array<Record<string, unknown>>;
  total: number;
  size: number;
  number: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RESERVED_GROUP_NAMES = new Set(['administrators', 'users']);

function notFound(type: RecordType): AppError {
  return new AppError('not_found', `no such ${type.name} record`);
}

async function requireTable(db: Db, principal: Principal, type: RecordType, op: Operation): Promise<void> {
  const world = await loadWorld(db, type.name);
  if (!can(principal, op, world.guard)) throw denied(isGuest(principal), `${op} ${type.name} records`);
}

/** Outside transactions (list, get): the hot-path reads. */
async function requireTableNow(store: Store, principal: Principal, type: RecordType, op: Operation): Promise<void> {
  const world = await readGuarded(store, 'world', { column: 'table_name', value: type.name });
  if (!world || !can(principal, op, world.guard)) throw denied(isGuest(principal), `${op} ${type.name} records`);
}

async function loadReadable(db: Db, principal: Principal, type: RecordType, id: string): Promise<GuardedRow<Row>> {
  if (!UUID.test(id)) throw notFound(type);
  const found = await fetchOneGuarded(db, type.name, { reference_id: id.toLowerCase() }, (r) => normalizeRow<Row>(r));
  if (!found || !can(principal, 'read', found.guard)) throw notFound(type);
  return found;
}

/** `tableGuard`: the type's table permission when the caller already read it (hot path). */
export async function listRecordsFor(
  deps: Deps,
  principal: Principal,
  type: RecordType,
  query: Record<string, string | string[] | undefined>,
  tableGuard?: Guarded,
): Promise<RecordPage> {
  const params = parseListParams(type, query);
  if (tableGuard) {
    if (!can(principal, 'peek', tableGuard)) throw denied(isGuest(principal), `peek ${type.name} records`);
  } else await requireTableNow(deps.store, principal, type, 'peek');
  const { rows, total } = await listReadable(deps.store, {
    table: type.name,
    principal,
    filter: params.filter === undefined ? undefined : { text: params.filter, columns: type.filterColumns },
    sort: params.sort,
    limit: params.size,
    offset: (params.number - 1) * params.size,
  });
  return { rows, total, size: params.size, number: params.number };
}

/**
 * `principal` may still be resolving (the token check reads the store too): the row is read in
 * the meantime, and nothing is decided before both are known.
 */
export async function getRecord(
  deps: Deps,
  principal: Principal | Promise<Principal>,
  type: RecordType,
  id: string,
): Promise<Record<string, unknown>> {
  const row = UUID.test(id) ? readGuarded(deps.store, type.name, { column: 'reference_id', value: id.toLowerCase() }) : Promise.resolve(undefined);
  const [caller, found] = await Promise.all([principal, row]);
  if (!found || !can(caller, 'read', found.guard)) throw notFound(type);
  return found.row;
}

/** Sorts requested attributes into allowed ones, refusing the whole write on any bad field. */
function checkWritable(type: RecordType, principal: Principal, attributes: Record<string, unknown>): void {
  for (const key of Object.keys(attributes)) {
    if (type.writable.includes(key)) continue;
    if (type.adminWritable.includes(key) || type.protectedFields.includes(key)) {
      if (!principal.isAdmin) throw new AppError('forbidden', `${key} cannot be changed by you`);
      if (type.adminWritable.includes(key)) continue;
      throw new AppError('invalid_input', `${key} cannot be written through the record API`);
    }
    throw new AppError('invalid_input', `unknown attribute ${key.slice(0, 40)} for ${type.name}`);
  }
}

function validatedChanges(type: RecordType, attributes: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'permission' || key === 'default_permission') changes[key] = parsePermission(value, key);
    else if (key === 'name') {
      if (typeof value !== 'string') throw new AppError('invalid_input', 'name must be a string');
      const name = validateName(value);
      if (type.name === 'usergroup' && RESERVED_GROUP_NAMES.has(name.toLowerCase())) {
        throw new AppError('invalid_input', `the group name ${name} is reserved`);
      }
      changes.name = name;
    } else if (key === 'label') {
      if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
        throw new AppError('invalid_input', 'label must be a non-empty string of at most 200 characters');
      }
      changes.label = value.trim();
    } else if (key === 'disabled') {
      if (typeof value !== 'boolean') throw new AppError('invalid_input', 'disabled must be true or false');
      changes.disabled = value;
    }
  }
  return changes;
}

export async function createRecord(
  deps: Deps,
  principal: Principal,
  type: RecordType,
  attributes: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!type.creatable) throw new AppError('forbidden', `${type.name} records are built in and cannot be created`);
  if (type.name === 'user_account') {
    // The same gate and the same code as signup: closing signup closes this door too.
    const created = await createAccount(deps, principal, parseNewAccount(attributes, deps.config.passwordMinLength, false));
    deps.counters.signups++;
    await deps.audit.record('signup', { account: created.referenceId, via: 'record_api' });
    if (created.becameAdministrator) await deps.audit.record('bootstrap', { account: created.referenceId, via: 'record_api' });
    // A guest who signed up this way may not read the row: answer with what it just gave.
    return getRecord(deps, principal, type, created.referenceId).catch(() => ({
      reference_id: created.referenceId,
      email: created.email,
      name: created.name,
    }));
  }
  // usergroup. The guest create bit exists for the signup chain; a group made by a guest
  // would have no owner to manage it, so the record API asks guests to sign in.
  if (principal.accountId === null) throw new AppError('unauthenticated', 'sign in to create groups');
  for (const key of Object.keys(attributes)) {
    if (key !== 'name' && key !== 'permission') throw new AppError('invalid_input', `unknown attribute ${key.slice(0, 40)} for usergroup`);
  }
  if (!Object.hasOwn(attributes, 'name')) throw new AppError('invalid_input', 'name is required');
  const changes = validatedChanges(type, attributes);
  const db = deps.store.knex;
  const world = await loadWorld(db, 'usergroup');
  if (!can(principal, 'create', world.guard)) throw denied(false, 'create usergroup records');
  const group = await insertGroup(db, {
    name: changes.name as string,
    ownerId: principal.accountId,
    permission: (changes.permission as number | undefined) ?? world.row.default_permission,
  });
  return getRecord(deps, principal, type, group.referenceId);
}

export async function updateRecord(
  deps: Deps,
  principal: Principal,
  type: RecordType,
  id: string,
  attributes: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  checkWritable(type, principal, attributes);
  const changes = validatedChanges(type, attributes);
  // Audited after the transaction: the audit write must not wait for the connection it holds.
  const permissionChangedOn = await deps.store.transaction(async (trx): Promise<string | null> => {
    if (type.name === 'user_account') await lockAccounts(trx);
    const found = await loadReadable(trx, principal, type, id);
    await requireTable(trx, principal, type, 'update');
    if (!can(principal, 'update', found.guard)) throw denied(isGuest(principal), `update this ${type.name}`);
    if (type.name === 'usergroup' && found.row.system_role) throw new AppError('forbidden', 'system groups cannot be changed');
    if (Object.keys(changes).length === 0) return null;
    if (type.name === 'user_account' && changes.disabled !== undefined && changes.disabled !== Boolean(found.row.disabled)) {
      if (changes.disabled && (await isAdministrator(trx, found.row.id)) && (await countAdministrators(trx)) <= 1) {
        throw new AppError('forbidden', 'the last administrator cannot be disabled');
      }
      // Disabling (or re-enabling) an account ends every session issued before.
      await bumpAuthVersion(trx, found.row.id, changes);
      return null;
    }
    await trx(type.name)
      .where({ id: found.row.id })
      .update({ ...changes, updated_at: Date.now() });
    const permissionChanged = Object.hasOwn(changes, 'permission') || Object.hasOwn(changes, 'default_permission');
    return permissionChanged ? (found.row.reference_id as string) : null;
  });
  if (permissionChangedOn !== null) {
    await deps.audit.record('permission_changed', {
      account: principal.referenceId,
      record_type: type.name,
      record: permissionChangedOn,
      permission: (changes.permission as number | undefined) ?? null,
      default_permission: (changes.default_permission as number | undefined) ?? undefined,
    });
  }
  return getRecord(deps, principal, type, id);
}

export async function deleteRecord(deps: Deps, principal: Principal, type: RecordType, id: string): Promise<void> {
  if (!type.deletable) throw new AppError('forbidden', `${type.name} records are built in and cannot be deleted`);
  await deps.store.transaction(async (trx) => {
    if (type.name === 'user_account') await lockAccounts(trx);
    const found = await loadReadable(trx, principal, type, id);
    await requireTable(trx, principal, type, 'delete');
    if (!can(principal, 'delete', found.guard)) throw denied(isGuest(principal), `delete this ${type.name}`);
    if (type.name === 'usergroup' && found.row.system_role) throw new AppError('forbidden', 'system groups cannot be deleted');
    if (type.name === 'user_account') {
      if ((await isAdministrator(trx, found.row.id)) && (await countAdministrators(trx)) <= 1) {
        throw new AppError('forbidden', 'the last administrator cannot be deleted');
      }
      // The account's dedicated group goes with it (groups it owns that nobody else is in).
      const owned = await trx('usergroup').where({ user_account_id: found.row.id }).whereNull('system_role').select('id');
      for (const g of owned) {
        const others = await trx('membership').where({ usergroup_id: g.id }).whereNot({ account_id: found.row.id }).first('id');
        if (!others) await trx('usergroup').where({ id: g.id }).del();
      }
    }
    await trx('record_usergroup').where({ record_type: type.name, record_id: found.row.id }).del();
    await trx(type.name).where({ id: found.row.id }).del();
  });
  if (type.name === 'user_account') await deps.audit.record('account_deleted', { account: String(id), by: principal.referenceId });
}
