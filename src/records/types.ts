/**
 * The record types the JSON:API serves, with their allow-lists: which columns are shown, filtered,
 * sorted and written. Nothing outside these lists is ever read from a request or serialized.
 */
export type RecordTypeName = 'user_account' | 'usergroup' | 'action' | 'world';

export interface RecordType {
  name: RecordTypeName;
  /** Columns serialized as attributes (never hashes, secrets or internal ids). */
  attributes: readonly string[];
  filterColumns: readonly string[];
  sortColumns: readonly string[];
  /** Written by anyone whose permissions allow the update. */
  writable: readonly string[];
  /** Written by administrators only; anyone else's attempt is refused whole with 403. */
  adminWritable: readonly string[];
  /** Known but never written through the record API by non-administrators (403). */
  protectedFields: readonly string[];
  creatable: boolean;
  deletable: boolean;
}

const TIMES = ['created_at', 'updated_at'] as const;

export const RECORD_TYPES: Readonly<Record<RecordTypeName, RecordType>> = {
  user_account: {
    name: 'user_account',
    attributes: ['email', 'name', 'permission', 'email_verified', 'totp_enabled', 'disabled', ...TIMES],
    filterColumns: ['email', 'name'],
    sortColumns: ['email', 'name', ...TIMES],
    writable: ['name'],
    adminWritable: ['permission', 'disabled'],
    protectedFields: [
      'email', 'password', 'passwordConfirm', 'auth_version', 'email_verified', 'totp_enabled', 'totp_secret',
      'user_account_id', 'owner', 'reference_id', 'id', 'created_at', 'updated_at',
    ],
    creatable: true,
    deletable: true,
  },
  usergroup: {
    name: 'usergroup',
    attributes: ['name', 'permission', 'system_role', ...TIMES],
    filterColumns: ['name'],
    sortColumns: ['name', ...TIMES],
    writable: ['name', 'permission'],
    adminWritable: [],
    protectedFields: ['system_role', 'user_account_id', 'owner', 'reference_id', 'id', 'created_at', 'updated_at'],
    creatable: true,
    deletable: true,
  },
  action: {
    name: 'action',
    attributes: ['on_type', 'action_name', 'label', 'permission', ...TIMES],
    filterColumns: ['action_name', 'label'],
    sortColumns: ['on_type', 'action_name', 'label', ...TIMES],
    writable: ['label', 'permission'],
    adminWritable: [],
    protectedFields: ['on_type', 'action_name', 'user_account_id', 'owner', 'reference_id', 'id', 'created_at', 'updated_at'],
    creatable: false,
    deletable: false,
  },
  world: {
    name: 'world',
    attributes: ['table_name', 'permission', 'default_permission', ...TIMES],
    filterColumns: ['table_name'],
    sortColumns: ['table_name', ...TIMES],
    writable: ['permission', 'default_permission'],
    adminWritable: [],
    protectedFields: ['table_name', 'user_account_id', 'owner', 'reference_id', 'id', 'created_at', 'updated_at'],
    creatable: false,
    deletable: false,
  },
};

export function recordType(name: string): RecordType | undefined {
  return Object.hasOwn(RECORD_TYPES, name) ? RECORD_TYPES[name as RecordTypeName] : undefined;
}
