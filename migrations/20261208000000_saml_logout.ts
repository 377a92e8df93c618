/**
 * SAML single logout that only the app a session signed in to can ask for: each Response a
 * session sent to a service provider is kept (the NameID and SessionIndex it said), and a
 * LogoutRequest must name one of them; the LogoutRequests answered are kept by ID, unique per SP,
 * until they would be too old to be accepted anyway (a replayed request is refused).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('saml_signin', (t) => {
    // Gone with the session (its rows are pruned) or the service provider.
    t.string('session_id', 32).notNullable().references('id').inTable('session').onDelete('CASCADE');
    t.text('sp_id').notNullable().references('id').inTable('saml_sp').onDelete('CASCADE');
    t.text('name_id').notNullable();
    t.text('session_index').notNullable();
    t.bigInteger('created_at').notNullable();
    t.primary(['session_id', 'sp_id', 'name_id']);
  });
  await knex.schema.createTable('saml_logout_request', (t) => {
    t.text('sp_id').notNullable().references('id').inTable('saml_sp').onDelete('CASCADE');
    t.text('request_id').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.primary(['sp_id', 'request_id']);
  });
  await knex.raw('CREATE INDEX saml_signin_sp ON saml_signin (sp_id)');
  await knex.raw('CREATE INDEX saml_logout_request_expires ON saml_logout_request (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('saml_logout_request');
  await knex.schema.dropTable('saml_signin');
}
