/**
 * The OpenID Connect provider's state (sessions, interactions, grants, codes, tokens) and its
 * registered clients, in the store so every instance shares them.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('oidc_payload', (t) => {
    t.string('model', 32).notNullable();
    t.string('id', 128).notNullable();
    t.text('payload').notNullable();
    t.string('grant_id', 128).nullable();
    t.string('uid', 128).nullable();
    // The client of grants (consent is asked once per client and scope set, across sessions).
    t.string('client_id', 64).nullable();
    // The account (reference_id) and its auth_version when written: a bump or disabling ends it.
    t.string('account', 36).nullable();
    t.integer('auth_version').nullable();
    t.bigInteger('expires_at').nullable();
    t.bigInteger('consumed_at').nullable();
    t.primary(['model', 'id']);
    t.index(['grant_id']);
    t.index(['uid']);
    t.index(['account', 'client_id']);
    t.index(['expires_at']);
  });
  await knex.schema.createTable('oidc_client', (t) => {
    t.string('client_id', 64).primary();
    t.string('name', 100).notNullable();
    // redirect_uris, post_logout_redirect_uris, token_endpoint_auth_method (JSON).
    t.text('metadata').notNullable();
    // Confidential clients only; the provider compares it in constant time.
    t.string('client_secret', 100).nullable();
    t.boolean('first_party').notNullable().defaultTo(false);
    // Group names whose members may sign in (JSON array); empty: everyone.
    t.text('allowed_groups').notNullable();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('oidc_client');
  await knex.schema.dropTableIfExists('oidc_payload');
}
