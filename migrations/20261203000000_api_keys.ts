/**
 * API keys (contract section 16): long random keys a script uses as `Authorization: Bearer gh_…`
 * to act as one account on the HTTP API. Only the SHA-256 of each is kept (192 random bits:
 * nothing to guess, nothing to stretch). A key holds the account's auth_version when it was made:
 * revoke-sessions, a new password or a disabled account ends it, as it ends every session.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_key', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('secret_hash', 64).notNullable().unique();
    t.integer('auth_version').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').nullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['account_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_key');
}
