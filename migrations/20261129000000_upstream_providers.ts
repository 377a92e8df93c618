/**
 * Sign in with another provider (contract section 14): the upstream OpenID Connect providers an
 * operator added, the identities (provider, subject) linked to accounts, and the sign-ins in
 * flight (state, nonce and PKCE verifier, bound to the browser that began them).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('upstream_provider', (t) => {
    t.increments('id').primary();
    // Lower-case letters, digits and dashes: it names the callback path.
    t.string('name', 40).notNullable().unique();
    t.string('display_name', 100).notNullable();
    t.string('issuer', 500).notNullable();
    t.string('client_id', 500).notNullable();
    t.text('client_secret').notNullable();
    /** JSON array of scopes beyond openid. */
    t.text('scopes').notNullable();
    t.boolean('trust_email').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('linked_identity', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.integer('provider_id').notNullable().references('id').inTable('upstream_provider').onDelete('CASCADE');
    t.string('subject', 255).notNullable();
    /** The provider's email for it when it was linked (shown to its owner; never used to sign in). */
    t.string('email', 254).nullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.unique(['provider_id', 'subject']);
    t.index(['account_id']);
  });
  await knex.schema.createTable('upstream_flow', (t) => {
    // SHA-256 of the state sent upstream: the flow is found by it, and spent by deleting it.
    t.string('state_hash', 64).primary();
    t.integer('provider_id').notNullable().references('id').inTable('upstream_provider').onDelete('CASCADE');
    /** SHA-256 of the random value in the browser's flow cookie: a callback from another browser finds no flow. */
    t.string('binding', 64).notNullable();
    t.string('nonce', 64).notNullable();
    t.string('code_verifier', 128).notNullable();
    // signin | link
    t.string('purpose', 16).notNullable();
    t.integer('account_id').nullable().references('id').inTable('user_account').onDelete('CASCADE');
    /** JSON: where to go after (return_to, rd) and the invitation it carries, if any. */
    t.text('carry').notNullable();
    t.bigInteger('expires_at').notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('upstream_flow');
  await knex.schema.dropTable('linked_identity');
  await knex.schema.dropTable('upstream_provider');
}
