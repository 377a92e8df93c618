/**
 * The SAML 2.0 identity provider: its signing keys with their certificates, the service
 * providers registered from the shell or the console, and the sign-ins in progress (an
 * AuthnRequest kept between the SP's redirect and the person's sign-in, on any instance; its ID
 * stays, unique per SP, until it expires: a replayed request is refused).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('saml_key', (t) => {
    t.text('kid').primary();
    t.text('private_key').notNullable();
    t.text('certificate').notNullable();
    // 'current' signs, 'next' is listed in metadata beside it; retired keys are deleted.
    t.text('status').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('saml_sp', (t) => {
    t.text('id').primary();
    t.text('entity_id').notNullable().unique();
    t.text('name').notNullable();
    // JSON: [{ binding, location, index, is_default }]
    t.text('acs').notNullable();
    // JSON: [{ binding, location }]
    t.text('slo').notNullable();
    t.text('certificate');
    t.boolean('authn_requests_signed').notNullable();
    t.text('nameid').notNullable();
    t.text('allowed_groups').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('saml_request', (t) => {
    t.text('handle').primary();
    t.text('sp_id').notNullable().references('id').inTable('saml_sp').onDelete('CASCADE');
    t.text('request_id').notNullable();
    t.text('acs_url').notNullable();
    t.text('relay_state');
    t.boolean('force_authn').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('answered_at');
    t.unique(['sp_id', 'request_id']);
  });
  await knex.raw('CREATE INDEX saml_request_expires ON saml_request (expires_at)');
  await knex('write_lock').insert({ name: 'saml_keys', counter: 0 });
}

export async function down(knex: Knex): Promise<void> {
  await knex('write_lock').where({ name: 'saml_keys' }).del();
  await knex.schema.dropTable('saml_request');
  await knex.schema.dropTable('saml_sp');
  await knex.schema.dropTable('saml_key');
}
