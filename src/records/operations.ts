/** The record API's operations: list, read, create, change and delete rows, and the caller's own account. */
import { changeShares, listShares, type SharedGroup, type ShareChange } from './sharing';
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { authenticate } from '../access/authenticate';
import { groupsOf } from '../store/accounts';
import { ColumnType, SCHEMA } from '../store/schema';
import { reloadAccount } from '../accounts/lifecycle';
import { listSessions, type SessionView } from '../accounts/sessions';
import { createRecord, deleteRecord, getRecordOf, listRecords, RecordPage, RecordView, updateRecord, viewOf } from './service';
import { RECORD_TYPES, recordType } from './types';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Query } from './query';

/** The record API's page sizes, for documents that state them (/openapi.json). */
export const PAGE_SIZE = { default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE } as const;

export interface RecordTypeDescription {
  name: string;
  /** Serialized attributes and their types. */
  attributes: Readonly<Record<string, ColumnType>>;
  filterColumns: readonly string[];
  sortColumns: readonly string[];
  /** Attributes a PATCH may change, and who may. */
  writable: Readonly<Record<string, 'anyone' | 'administrators'>>;
  /** Attributes a POST takes; null: rows of this type are built in. */
  createAttributes: readonly string[] | null;
  deletable: boolean;
}

/** The record types as the HTTP API describes them (/openapi.json). */
export const describeRecordTypes = (): RecordTypeDescription[] =>
  Object.values(RECORD_TYPES).map((t) => ({
    name: t.name,
    attributes: Object.fromEntries(t.attributes.map((c) => [c, (SCHEMA[t.name] as Record<string, ColumnType>)[c]])),
    filterColumns: t.filterColumns,
    sortColumns: t.sortColumns,
    writable: Object.fromEntries(Object.entries(t.fields).map(([k, f]) => [k, f.writer])),
    createAttributes: t.createAttributes ?? null,
    deletable: t.remove !== undefined,
  }));

export interface RecordOperations {
  list(caller: Caller, type: string, query: Query): Promise<RecordPage>;
  get(caller: Caller, type: string, id: string): Promise<RecordView>;
  create(actor: Actor, type: string, attributes: Record<string, unknown>): Promise<RecordView>;
  update(actor: Actor, type: string, id: string, attributes: Record<string, unknown>): Promise<RecordView>;
  remove(actor: Actor, type: string, id: string): Promise<void>;
  /** The groups a row is shared with (read on the row). */
  shares(caller: Caller, type: string, id: string): Promise<SharedGroup[]>;
  /** Shares a row with groups or takes shares back (update on the row; membership of or refer on the group to share). */
  changeShares(actor: Actor, type: string, id: string, groupIds: readonly string[], change: ShareChange): Promise<void>;
  /** 404 for an unknown record type. */
  assertType(type: string): void;
  /** The caller's own account with its groups and whether it administers (401 for guests). */
  me(caller: Caller): Promise<{ view: RecordView; meta: { groups: Array<{ id: string; name: string }>; administrator: boolean; session: SessionView | null } }>;
}

export function recordOperations(s: Services): RecordOperations {
  return {
    assertType: (type) => void recordType(type),
    list: (caller, typeName, query) => listRecords(s, caller.token, recordType(typeName), query),
    // The token check and the row read are one statement; getRecordOf decides once both are in.
    get: (caller, typeName, id) => getRecordOf(s, caller.token, recordType(typeName), id),
    create: (actor, typeName, attributes) => createRecord(s, actor, recordType(typeName), attributes),
    update: (actor, typeName, id, attributes) => updateRecord(s, actor, recordType(typeName), id, attributes),
    remove: (actor, typeName, id) => deleteRecord(s, actor, recordType(typeName), id),
    shares: async (caller, typeName, id) => listShares(s, (await authenticate(s, caller.token)).principal, recordType(typeName), id),
    async changeShares(actor, typeName, id, groupIds, change) {
      await changeShares(s, actor, recordType(typeName), id, groupIds, change);
    },
    async me(caller) {
      const { principal, session } = await authenticate(s, caller.token);
      if (principal.accountId === null) throw new AppError('unauthenticated', 'sign in to read your account');
      const [account, groups, sessions] = await Promise.all([
        reloadAccount(s, principal.accountId),
        groupsOf(s.store.root, principal.accountId),
        listSessions(s, principal.accountId, session),
      ]);
      return {
        view: viewOf(recordType('user_account'), account),
        meta: {
          groups: groups.map((g) => ({ id: g.reference_id, name: g.name })),
          administrator: principal.isAdmin,
          session: sessions.find((x) => x.current) ?? null,
        },
      };
    },
  };
}
