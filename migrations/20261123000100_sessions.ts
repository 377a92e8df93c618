/**
 * Sessions: one per signin, with rotating refresh tokens (stored as SHA-256 hashes). A session
 * holds the account's auth_version from when it opened: a bump ends every session at once. The
 * session actions are added beside the others (refresh for guests, the rest self-service).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
// Permission values written out: a migration is frozen (see 20261122000000_initial.ts).
const SIGNUP_OPEN = 2097057;

const SELF_SERVICE = 589697; // guest peek; owner all; group peek, read, execute
const ACTIONS: Array<[string, string, number, boolean]> = [
  // [action_name, label, permission, executable through the users group]
  ['refresh', 'Refresh the access token', SIGNUP_OPEN, false],
  ['list_sessions', 'List my sessions', SELF_SERVICE, true],
  ['revoke_session', 'End one of my sessions', SELF_SERVICE, true],
  ['signout', 'Sign out (this session)', SELF_SERVICE, true],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('session', (t) => {
    t.string('id', 32).primary();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.integer('auth_version').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').notNullable();
    // 90 days after created_at; idle sessions (30 days since last_used_at) end too.
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('ended_at').nullable();
    t.string('client', 64).nullable();
    t.string('user_agent', 200).nullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('refresh_token', (t) => {
    // SHA-256 of the token; the token itself is never stored.
    t.string('token_hash', 64).primary();
    t.string('session_id', 32).notNullable().references('id').inTable('session').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('spent_at').nullable();
    t.index(['session_id']);
  });
  const now = Date.now();
  const users = await knex('usergroup').where({ system_role: 'users' }).first('id');
  for (const [name, label, permission, selfService] of ACTIONS) {
    const [row] = await knex('action')
      .insert({
        reference_id: randomUUID(),
        on_type: 'user_account',
        action_name: name,
        label,
        permission,
        user_account_id: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id');
    const id = Number(typeof row === 'object' ? row.id : row);
    if (selfService) await knex('record_usergroup').insert({ record_type: 'action', record_id: id, usergroup_id: users.id });
  }
}

export async function down(knex: Knex): Promise<void> {
  const ids = (
    await knex('action')
      .whereIn(
        'action_name',
        ACTIONS.map((a) => a[0]),
      )
      .select('id')
  ).map((r: { id: number }) => r.id);
  await knex('record_usergroup').where({ record_type: 'action' }).whereIn('record_id', ids).del();
  await knex('action').whereIn('id', ids).del();
  await knex.schema.dropTableIfExists('refresh_token');
  await knex.schema.dropTableIfExists('session');
}
