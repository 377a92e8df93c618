/**
 * The record types the JSON:API serves, as definitions: which columns are shown, filtered,
 * sorted and written (with each writable field's parser and who may write it), and the hooks
 * where a type adds a rule (an account's `disabled` goes through the account use case; system
 * groups stay as they are; deleting an account takes its dedicated group). Nothing outside these
 * lists is ever read from a request or serialized.
 */
import { assertNotManaged } from '../managed/managed-by';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { AuditEvent } from '../audit-events';
import type { Services } from '../services';
import { parsePermission } from '../permission/bits';
import { createAccount, parseNewAccount } from '../accounts/create';
import { applyDisabled } from '../accounts/lifecycle';
import { deleteAccountIn } from '../accounts/provisioned';
import { validateName } from '../accounts/validate';
import { parseUsername } from '../accounts/usernames';
import type { Tx } from '../store/connection';
import { AccountRow, usernameInUse } from '../store/accounts';
import { deleteRow, updateRow } from '../store/records';
import type { GuardedTable } from '../store/guarded-rows';
import type { AccountFacts } from '../deliveries/events';
import { assertNotSystemGroup, createGroup, parseGroupName } from '../groups/manage';
import { assertGroupNameFree } from '../groups/names';

export type RecordTypeName = 'user_account' | 'usergroup' | 'action' | 'world';
export type RecordRow = Record<string, unknown> & { id: number; reference_id: string; permission: number; user_account_id: number | null };

export interface FieldDef {
  /** `anyone` whose permissions allow the update, or `administrators` only (403 for others). */
  readonly writer: 'anyone' | 'administrators';
  parse(value: unknown, key: string): unknown;
}

/** An audit event a write causes, written after its transaction commits. */
export interface WriteEvent {
  event: AuditEvent;
  account: string | null;
  details?: Record<string, string>;
  /** The account as it was, for an event announced after it is gone (account_deleted). */
  about?: AccountFacts;
}

export interface RecordType {
  readonly name: RecordTypeName & GuardedTable;
  /** Columns serialized as attributes (never hashes, secrets or internal ids). */
  readonly attributes: readonly string[];
  readonly filterColumns: readonly string[];
  readonly sortColumns: readonly string[];
  readonly fields: Readonly<Record<string, FieldDef>>;
  /** Known but never written through the record API (403 for non-administrators, 400 for them). */
  readonly protectedFields: readonly string[];
  /** Account writes serialize on the accounts lock (the last-administrator rule reads counts). */
  readonly locksAccounts?: boolean;
  /** The attributes a create takes (exactly these; /openapi.json documents them); absent: not creatable. */
  readonly createAttributes?: readonly string[];
  /** Creates a row and returns its reference_id; absent: built in, not creatable. */
  create?(s: Services, actor: Actor, attributes: Record<string, unknown>): Promise<{ referenceId: string; echo: Record<string, unknown> }>;
  /** Refuses a write to this row (inside the transaction). */
  guard?(tx: Tx, row: RecordRow, op: 'update' | 'delete'): Promise<void>;
  /** Applies validated changes; the default sets the columns. */
  update?(tx: Tx, row: RecordRow, changes: Record<string, unknown>): Promise<WriteEvent[]>;
  /** Deletes the row; absent: built in, not deletable. */
  remove?(tx: Tx, row: RecordRow): Promise<WriteEvent[]>;
}

const TIMES = ['created_at', 'updated_at'] as const;
const IDS = ['user_account_id', 'owner', 'reference_id', 'id', ...TIMES] as const;

const permissionField: FieldDef = { writer: 'anyone', parse: (v, key) => parsePermission(v, key) };

const accountNameField: FieldDef = {
  writer: 'anyone',
  parse(value) {
    if (typeof value !== 'string') throw new AppError('invalid_input', 'name must be a string');
    return validateName(value);
  },
};

const labelField: FieldDef = {
  writer: 'anyone',
  parse(value) {
    if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
      throw new AppError('invalid_input', 'label must be a non-empty string of at most 200 characters');
    }
    return value.trim();
  },
};

const booleanField = (key: string): FieldDef => ({
  writer: 'administrators',
  parse(value) {
    if (typeof value !== 'boolean') throw new AppError('invalid_input', `${key} must be true or false`);
    return value;
  },
});

const SIGNUP_ATTRIBUTES = ['email', 'name', 'password', 'passwordConfirm', 'username'];

const usernameField: FieldDef = { writer: 'anyone', parse: (value) => parseUsername(value) };

const userAccount: RecordType = {
  name: 'user_account',
  attributes: ['email', 'username', 'name', 'permission', 'email_verified', 'totp_enabled', 'disabled', ...TIMES],
  filterColumns: ['email', 'name'],
  sortColumns: ['email', 'name', ...TIMES],
  fields: { name: accountNameField, username: usernameField, permission: { ...permissionField, writer: 'administrators' }, disabled: booleanField('disabled') },
  protectedFields: ['email', 'password', 'passwordConfirm', 'auth_version', 'email_verified', 'totp_enabled', 'totp_secret', ...IDS],
  locksAccounts: true,
  createAttributes: SIGNUP_ATTRIBUTES,
  async create(s, actor, attributes) {
    // Exactly signup's attributes, as for PATCH: anything else is refused, never silently dropped.
    for (const key of Object.keys(attributes)) {
      if (SIGNUP_ATTRIBUTES.includes(key)) continue;
      const known = Object.hasOwn(userAccount.fields, key) || userAccount.protectedFields.includes(key) || userAccount.attributes.includes(key);
      if (!known) throw new AppError('invalid_input', `unknown attribute ${key.slice(0, 40)} for user_account`);
      throw new AppError('forbidden', `${key} cannot be set when creating an account (send ${SIGNUP_ATTRIBUTES.join(', ')})`, { reason: 'field_not_writable' });
    }
    // The same gate and the same code as signup: closing signup closes this door too.
    const created = await createAccount(s, actor, parseNewAccount(attributes, s.config.passwordMinLength));
    return { referenceId: created.referenceId, echo: { reference_id: created.referenceId, email: created.email, name: created.name } };
  },
  async update(tx, row, changes) {
    const { disabled, ...columns } = changes;
    const events: WriteEvent[] = [];
    // Name and username are a directory source's, for the people it brought.
    if (columns.username !== undefined || columns.name !== undefined)
      await assertNotManaged(tx, 'http', { kind: 'account', id: Number(row.id), part: columns.name !== undefined ? 'name' : 'username' });
    // Unique: checked under the accounts' lock this update holds (locksAccounts).
    if (columns.username !== undefined && columns.username !== row.username) {
      if (await usernameInUse(tx, String(columns.username), Number(row.id)))
        throw new AppError('name_taken', `the username ${String(columns.username)} is taken`);
      events.push({ event: 'username_changed', account: String(row.reference_id) });
    }
    if (Object.keys(columns).length > 0) await updateRow(tx, 'user_account', row.id, columns);
    if (columns.name !== undefined && columns.name !== row.name) events.push({ event: 'name_changed', account: row.reference_id });
    // Disabling (or enabling) is the account use case: the last-administrator rule, sessions end.
    if (disabled !== undefined && (await applyDisabled(tx, row as unknown as AccountRow, disabled as boolean))) {
      events.push({ event: disabled ? 'account_disabled' : 'account_enabled', account: row.reference_id });
    }
    return events;
  },
  async remove(tx, row) {
    // The account is gone when the event is announced: its address and name travel with it.
    const about = await deleteAccountIn(tx, 'http', { id: row.id, reference_id: row.reference_id, email: String(row.email), name: String(row.name) });
    return [{ event: 'account_deleted', account: row.reference_id, about }];
  },
};

const usergroup: RecordType = {
  name: 'usergroup',
  attributes: ['name', 'permission', 'system_role', ...TIMES],
  filterColumns: ['name'],
  sortColumns: ['name', ...TIMES],
  fields: { name: { writer: 'anyone', parse: parseGroupName }, permission: permissionField },
  protectedFields: ['system_role', ...IDS],
  createAttributes: ['name', 'permission'],
  async create(s, actor, attributes) {
    // The guest create bit exists for the signup chain; a group made by a guest would have no
    // owner to manage it, so the record API asks guests to sign in.
    const ownerId = actor.principal.accountId;
    if (ownerId === null) throw new AppError('unauthenticated', 'sign in to create groups');
    for (const key of Object.keys(attributes)) {
      if (!usergroup.createAttributes!.includes(key)) throw new AppError('invalid_input', `unknown attribute ${key.slice(0, 40)} for usergroup`);
    }
    if (!Object.hasOwn(attributes, 'name')) throw new AppError('invalid_input', 'name is required');
    const name = parseGroupName(attributes.name);
    const permission = attributes.permission === undefined ? undefined : parsePermission(attributes.permission, 'permission');
    const group = await createGroup(s, actor, { name, ownerId, permission });
    return { referenceId: group.reference_id, echo: { reference_id: group.reference_id, name } };
  },
  async guard(_tx, row, op) {
    assertNotSystemGroup({ system_role: row.system_role ? String(row.system_role) : null }, op === 'update' ? 'update' : 'delete');
  },
  async update(tx, row, changes) {
    // A group a configuration file manages is the file's to change; a directory source's has the directory's name.
    await assertNotManaged(tx, 'http', {
      kind: 'group',
      id: row.id,
      name: String(row.name),
      part: changes.name !== undefined ? 'name and existence' : 'settings',
    });
    // A rename (a dedicated group's too) may not take a managed group's name or a look-alike of it.
    if (typeof changes.name === 'string') await assertGroupNameFree(tx, changes.name, row.id);
    await updateRow(tx, 'usergroup', row.id, changes);
    // A rename is audited (and follows to the apps Gatehouse pushes groups to).
    if (typeof changes.name === 'string' && changes.name !== row.name) {
      return [{ event: 'group_renamed', account: null, details: { group: row.reference_id, group_name: changes.name } }];
    }
    return [];
  },
  async remove(tx, row) {
    await assertNotManaged(tx, 'http', { kind: 'group', id: row.id, name: String(row.name), part: 'name and existence' });
    await deleteRow(tx, 'usergroup', row.id);
    return [{ event: 'group_deleted', account: null, details: { group: row.reference_id, group_name: String(row.name) } }];
  },
};

const action: RecordType = {
  name: 'action',
  attributes: ['on_type', 'action_name', 'label', 'permission', ...TIMES],
  filterColumns: ['action_name', 'label'],
  sortColumns: ['on_type', 'action_name', 'label', ...TIMES],
  fields: { label: labelField, permission: permissionField },
  protectedFields: ['on_type', 'action_name', ...IDS],
  async update(tx, row, changes) {
    // Who may run an action a configuration file manages is the file's to say.
    if ('permission' in changes) await assertNotManaged(tx, 'http', { kind: 'action', name: `${String(row.on_type)}/${String(row.action_name)}` });
    await updateRow(tx, 'action', row.id, changes);
    return [];
  },
};

const world: RecordType = {
  name: 'world',
  attributes: ['table_name', 'permission', 'default_permission', ...TIMES],
  filterColumns: ['table_name'],
  sortColumns: ['table_name', ...TIMES],
  fields: { permission: permissionField, default_permission: permissionField },
  protectedFields: ['table_name', ...IDS],
};

export const RECORD_TYPES: Readonly<Record<RecordTypeName, RecordType>> = { user_account: userAccount, usergroup, action, world };

export function recordType(name: string): RecordType {
  if (!Object.hasOwn(RECORD_TYPES, name)) throw new AppError('not_found', 'no such record type');
  return RECORD_TYPES[name as RecordTypeName];
}
