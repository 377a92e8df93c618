/**
 * Single-use account tokens (email verification, password reset) and the counters behind rate
 * limits and lockouts. Both live in the store so they survive restarts and are shared by every
 * instance on one database.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_token', (t) => {
    t.increments('id').primary();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('purpose', 32).notNullable();
    // SHA-256 of the token; the token itself is never stored.
    t.string('token_hash', 64).notNullable().unique();
    t.string('email_key', 254).notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.index(['account_id', 'purpose']);
  });

  await knex.schema.createTable('rate_counter', (t) => {
    t.string('counter_key', 300).primary();
    t.bigInteger('window_start').notNullable();
    t.integer('hits').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('rate_counter');
  await knex.schema.dropTableIfExists('account_token');
}
