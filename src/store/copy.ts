/**
 * Copying a whole store to another (SQLite → PostgreSQL, or back): every account, group,
 * membership and nesting, permission, action, the signing keys (and an upgraded store's HS256 secret), tokens, counters, recovery codes and the audit
 * trail, with their ids, in one transaction on the target. The target must hold no accounts.
 */
import type { Knex } from 'knex';
import { AppError } from '../errors';
import type { Config } from '../config';
import { systemClock } from '../clock';
import { internalsOf, openStore, Store } from './connection';
import { storeError } from './handle';
import { decodeRow, SCHEMA, TableName } from './schema';

/** Parents before children (foreign keys). */
export const COPIED_TABLES: readonly TableName[] = [
  'user_account',
  'usergroup',
  'membership',
  'usergroup_nesting',
  'usergroup_closure',
  'world',
  'action',
  'record_usergroup',
  'gatehouse_setting',
  'signing_key',
  'write_lock',
  'account_token',
  'mail_code',
  'session',
  'refresh_token',
  'oidc_client',
  'oidc_payload',
  'forward_app',
  'passkey',
  'webauthn_challenge',
  'invitation',
  'upstream_provider',
  'linked_identity',
  'upstream_flow',
  'webhook',
  'scim_target',
  'scim_pushed',
  'delivery',
  'app_password',
  'ssh_key',
  'posix_counter',
  'api_key',
  'saml_key',
  'saml_sp',
  'saml_request',
  'saml_signin',
  'saml_logout_request',
  'oidc_signin',
  'scim_token',
  'rate_counter',
  'known_signin',
  'recovery_code',
  'config_managed',
  'directory_source',
  'source_entry',
  'audit_event',
];

/** Tables keyed by an integer id (paged by it, their PostgreSQL sequence moved past it): read from the schema, not listed again. */
const WITH_ID = new Set(COPIED_TABLES.filter((table) => (SCHEMA[table] as Record<string, string>).id === 'int'));
const BATCH = 200;
/** The unique column paging orders by, for tables without an id (default: name). */
const ORDER_KEY: Partial<Record<TableName, string | string[]>> = {
  known_signin: ['account_id', 'signin_key'],
  rate_counter: 'counter_key',
  signing_key: 'kid',
  session: 'id',
  refresh_token: 'token_hash',
  oidc_client: 'client_id',
  oidc_payload: 'id',
  webauthn_challenge: 'challenge',
  upstream_flow: 'state_hash',
  saml_key: 'kid',
  saml_sp: 'id',
  saml_request: 'handle',
  saml_signin: ['session_id', 'sp_id', 'name_id'],
  saml_logout_request: ['sp_id', 'request_id'],
  oidc_signin: ['session_id', 'client_id'],
  usergroup_nesting: ['parent_id', 'child_id'],
  usergroup_closure: ['ancestor_id', 'descendant_id'],
  config_managed: ['kind', 'name'],
  scim_token: 'id',
  scim_pushed: ['target_id', 'reference_id'],
};

export interface CopyReport {
  tables: Array<{ table: string; source: number; target: number }>;
}

async function count(db: Knex | Knex.Transaction, table: string): Promise<number> {
  return Number((await db(table).count({ n: '*' }).first())?.n ?? 0);
}

export async function copyStore(fromStore: Store, toStore: Store): Promise<CopyReport> {
  try {
    return await copy(internalsOf(fromStore).knex, internalsOf(toStore).knex, toStore.dialect);
  } catch (err) {
    throw storeError(err, 'the copy');
  }
}

async function copy(from: Knex, to: Knex, toDialect: Store['dialect']): Promise<CopyReport> {
  if ((await count(to, 'user_account')) > 0) {
    throw new AppError('forbidden', 'the target store already holds accounts; copy into a new, empty database', { reason: 'store_not_empty' });
  }
  await to.transaction(async (trx) => {
    // The target's own seed rows (system groups, actions, world rows, secret) give way to the source's.
    for (const table of [...COPIED_TABLES].reverse()) await trx(table).del();
    for (const table of COPIED_TABLES) {
      let lastId = 0;
      let offset = 0;
      for (;;) {
        const q = from(table).limit(BATCH);
        // Keyset paging where there is an id; the others are small (settings, locks, counters).
        const rows: Array<Record<string, unknown>> = WITH_ID.has(table)
          ? await q.where('id', '>', lastId).orderBy('id')
          : await q.orderBy([ORDER_KEY[table] ?? 'name'].flat()).offset(offset);
        if (rows.length === 0) break;
        await trx(table).insert(rows.map((r) => decodeRow<Record<string, unknown>>(table, r)));
        if (WITH_ID.has(table)) lastId = Number(rows[rows.length - 1].id);
        offset += rows.length;
        if (rows.length < BATCH) break;
      }
      if (WITH_ID.has(table) && toDialect === 'postgres') {
        // Ids were copied: move the sequence past them so new rows do not collide.
        await trx.raw(`SELECT setval(pg_get_serial_sequence(?, 'id'), GREATEST((SELECT COALESCE(MAX(id), 0) FROM ${table}), 1))`, [table]);
      }
    }
  });
  const tables = [];
  for (const table of COPIED_TABLES) tables.push({ table, source: await count(from, table), target: await count(to, table) });
  const mismatch = tables.find((t) => t.source !== t.target);
  if (mismatch)
    throw new AppError('internal', `copy check failed for ${mismatch.table}: ${mismatch.source} rows in the source, ${mismatch.target} in the target`);
  return { tables };
}

/**
 * Copies the store `source` names into the new, empty one `target` names (SQLite to PostgreSQL
 * or back), every table with its ids, and checks every table's row count.
 */
export async function migrateStore(source: Config, target: Config): Promise<CopyReport & { from: string; to: string }> {
  if (target.db === source.db && target.dataDir === source.dataDir) throw new AppError('invalid_input', '{--to} names the store being copied');
  const from = await openStore(source, systemClock);
  try {
    const to = await openStore(target, systemClock);
    try {
      return { ...(await copyStore(from, to)), from: from.location, to: to.location };
    } finally {
      await to.close();
    }
  } finally {
    await from.close();
  }
}
