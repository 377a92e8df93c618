/**
 * The record API's rules, for every record type alike: list needs table peek and returns only
 * readable rows; get needs row read; create needs table create; update/delete need table and row
 * update/delete. Rows the caller may not read are "not found", so their existence does not leak.
 * What a type adds (its fields, its hooks) comes from its definition in types.ts.
 */
import { AppError, denied, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { can, isGuest, Principal, RECOVERY_ONLY } from '../permission/check';
import type { Operation } from '../permission/bits';
import type { Tx } from '../store/connection';
import { lockAccounts } from '../store/accounts';
import { guardedRide, GuardedRow, readGuarded, readWorld } from '../store/guarded-rows';
import { listReadable } from '../store/readable';
import { updateRow } from '../store/records';
import { authenticate, authenticateRiding, authenticateWith } from '../access/authenticate';
import { ListParams, parseListParams, Query } from './query';
import { isReference } from '../store/reference';
import type { RecordRow, RecordType, WriteEvent } from './types';

/** A row as the API shows it: the type's allow-listed attributes, times as ISO strings. */
export interface RecordView {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
}

export interface RecordPage {
  views: RecordView[];
  /** At least this many rows; exactly this many when totalExact. */
  total: number;
  /** False when the count stopped COUNT_AHEAD rows past the page (a large table). */
  totalExact: boolean;
  size: number;
  number: number;
}

const TIME_COLUMNS = new Set(['created_at', 'updated_at']);

export function viewOf(type: RecordType, record: object): RecordView {
  const row = record as Record<string, unknown>;
  const attributes: Record<string, unknown> = {};
  // Allow-list: only the type's declared attributes ever leave the server.
  for (const column of type.attributes) {
    if (!Object.hasOwn(row, column)) continue;
    const value = row[column];
    attributes[column] = TIME_COLUMNS.has(column) && typeof value === 'number' ? new Date(value).toISOString() : value;
  }
  return { type: type.name, id: String(row.reference_id), attributes };
}

const notFound = (type: RecordType) => new AppError('not_found', `no such ${type.name} record`);

async function requireTable(tx: Tx, principal: Principal, type: RecordType, op: Operation): Promise<void> {
  const world = await readWorld(tx, type.name);
  if (!can(principal, op, world.guard)) throw denied(isGuest(principal), `${op} ${type.name} records`);
}

export async function readRow(tx: Tx, type: RecordType, id: string): Promise<GuardedRow<RecordRow> | undefined> {
  if (!isReference(id)) return undefined;
  return readGuarded<RecordRow>(tx, type.name, { reference_id: id.toLowerCase() });
}

/** `table`: the type's table permission when the caller already read it (hot path). */
/**
 * A page of the rows `principal` may read. The read starts alongside the token's store check
 * (authenticateWith); the table's peek permission is decided once both are in. Bad query
 * parameters are still reported after a bad token: a 401 comes first.
 */
export async function listRecords(s: Services, token: string | null, type: RecordType, query: Query): Promise<RecordPage> {
  let params: ListParams | null = null;
  let invalid: unknown = null;
  try {
    params = parseListParams(type, query);
  } catch (err) {
    invalid = err;
  }
  const page = (principal: Principal) => (params === null ? Promise.resolve(null) : readPage(s, principal, type, params));
  const { principal, table, value } = await authenticateWith(s, token, type.name, page);
  notWhileRecovering(principal);
  if (invalid !== null) throw invalid;
  if (!table) throw new Error(`record type ${type.name} has no world row: the store was not migrated`);
  if (!can(principal, 'peek', table)) throw denied(isGuest(principal), `peek ${type.name} records`);
  return value!;
}

async function readPage(s: Services, principal: Principal, type: RecordType, params: ListParams): Promise<RecordPage> {
  const { rows, total, exact } = await listReadable(s.store.root, {
    table: type.name,
    principal,
    filter: params.filter === undefined ? undefined : { text: params.filter, columns: type.filterColumns },
    sort: params.sort,
    limit: params.size,
    offset: (params.number - 1) * params.size,
  });
  return { views: rows.map((r) => viewOf(type, r)), total, totalExact: exact, size: params.size, number: params.number };
}

/**
 * GET /api/<type>/<id>. On PostgreSQL the row is read in the same statement as the token's store
 * check (a round trip saved: ~10-30 % more gets per second). On SQLite the two statements run
 * side by side instead: there the combined statement cost more CPU than the two (measured with
 * scripts/bench.mjs; docs/performance.md).
 */
export async function getRecordOf(s: Services, token: string | null, type: RecordType, id: string): Promise<RecordView> {
  if (s.store.dialect !== 'postgres' || !isReference(id)) {
    return getRecord(
      s,
      authenticate(s, token).then((r) => r.principal),
      type,
      id,
    );
  }
  const { principal, value: found } = await authenticateRiding(
    s,
    token,
    () => guardedRide<RecordRow>(s.store.root, type.name, { reference_id: id.toLowerCase() }),
    { apiKeys: true },
  );
  if (!found || !can(principal, 'read', found.guard)) throw notFound(type);
  return viewOf(type, found.row);
}

/**
 * `principal` may still be resolving (the token check reads the store too): the row is read in
 * parallel, and the decision is made once both are in.
 */
export async function getRecord(s: Services, principal: Principal | Promise<Principal>, type: RecordType, id: string): Promise<RecordView> {
  const [p, found] = await Promise.all([principal, readRow(s.store.root, type, id)]);
  if (!found || !can(p, 'read', found.guard)) throw notFound(type);
  return viewOf(type, found.row);
}

/** A recovery link's session reads and writes no record (it may add a passkey or a password: actions). */
export function notWhileRecovering(principal: Principal): void {
  if (principal.recovering) throw new AppError('reauthentication_required', RECOVERY_ONLY);
}

export async function createRecord(s: Services, actor: Actor, type: RecordType, attributes: Record<string, unknown>): Promise<RecordView> {
  notWhileRecovering(actor.principal);
  if (!type.create) throw new AppError('forbidden', `${type.name} records are built in and cannot be created`, { reason: 'built_in_records' });
  const created = await type.create(s, actor, attributes);
  // A guest who signed up this way may not read the row: answer with what it just gave. (Only that
  // refusal: a store outage after the commit is a 503, not a success with made-up fields.)
  return getRecord(s, actor.principal, type, created.referenceId).catch((err: unknown) => {
    if (isAppError(err) && err.code === 'not_found') return viewOf(type, created.echo);
    throw err;
  });
}

/** Every attribute must be a writable field this caller may write; else the whole write is refused. */
function parseChanges(type: RecordType, principal: Principal, attributes: Record<string, unknown>): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(attributes)) {
    const field = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined;
    const known = field !== undefined || type.protectedFields.includes(key);
    if (!known) throw new AppError('invalid_input', `unknown attribute ${key.slice(0, 40)} for ${type.name}`);
    if ((field === undefined || field.writer === 'administrators') && !principal.isAdmin)
      throw new AppError('forbidden', `${key} cannot be changed by you`, { reason: 'field_not_writable' });
    if (field === undefined) throw new AppError('invalid_input', `${key} cannot be written through the record API`);
  }
  for (const [key, value] of Object.entries(attributes)) changes[key] = type.fields[key].parse(value, key);
  return changes;
}

/** A row the principal may `op` (404 unless readable, 401/403 otherwise), after the type's guard. */
export async function loadForWrite(tx: Tx, principal: Principal, type: RecordType, id: string, op: 'update' | 'delete'): Promise<RecordRow> {
  if (type.locksAccounts) await lockAccounts(tx);
  const found = await readRow(tx, type, id);
  if (!found || !can(principal, 'read', found.guard)) throw notFound(type);
  await requireTable(tx, principal, type, op);
  if (!can(principal, op, found.guard)) throw denied(isGuest(principal), `${op} this ${type.name}`);
  await type.guard?.(tx, found.row, op);
  return found.row;
}

/** Audited after the commit: an audit write must not wait for the connection the transaction holds. */
async function auditAll(s: Services, actor: Actor, events: WriteEvent[]): Promise<void> {
  for (const e of events) await s.audit.record(e.event, actor, { account: e.account, ...e.details }, 'info', e.about);
}

export async function updateRecord(s: Services, actor: Actor, type: RecordType, id: string, attributes: Record<string, unknown>): Promise<RecordView> {
  notWhileRecovering(actor.principal);
  const changes = parseChanges(type, actor.principal, attributes);
  const { row, events } = await s.store.transaction(async (tx) => {
    const found = await loadForWrite(tx, actor.principal, type, id, 'update');
    if (Object.keys(changes).length === 0) return { row: found, events: [] };
    const events = type.update ? await type.update(tx, found, changes) : (await updateRow(tx, type.name, found.id, changes), []);
    return { row: found, events };
  });
  if (Object.hasOwn(changes, 'permission') || Object.hasOwn(changes, 'default_permission')) {
    await s.audit.record('permission_changed', actor, {
      account: type.name === 'user_account' ? row.reference_id : null,
      record_type: type.name,
      record: row.reference_id,
      permission: (changes.permission as number | undefined) ?? null,
      default_permission: changes.default_permission as number | undefined,
    });
  }
  await auditAll(s, actor, events);
  return getRecord(s, actor.principal, type, id);
}

export async function deleteRecord(s: Services, actor: Actor, type: RecordType, id: string): Promise<void> {
  notWhileRecovering(actor.principal);
  const remove = type.remove;
  if (!remove) throw new AppError('forbidden', `${type.name} records are built in and cannot be deleted`, { reason: 'built_in_records' });
  const events = await s.store.transaction(async (tx) => remove(tx, await loadForWrite(tx, actor.principal, type, id, 'delete')));
  await auditAll(s, actor, events);
}
