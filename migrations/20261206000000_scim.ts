/**
 * SCIM 2.0 provisioning: the tokens a provisioning service (Entra ID, Okta, a script) presents,
 * kept as SHA-256; and the externalId a service gives each person, kept as given and indexed
 * (Entra looks people up by it).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('scim_token', (t) => {
    t.text('id').primary();
    t.text('name').notNullable().unique();
    t.text('token_hash').notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at');
    t.bigInteger('revoked_at');
  });
  await knex.schema.alterTable('user_account', (t) => {
    t.text('external_id');
  });
  await knex.raw('CREATE INDEX user_account_external_id ON user_account (external_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX user_account_external_id');
  await knex.schema.alterTable('user_account', (t) => {
    t.dropColumn('external_id');
  });
  await knex.schema.dropTable('scim_token');
}
