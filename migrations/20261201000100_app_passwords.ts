/**
 * App passwords (contract section 15): long random passwords an account makes for one app that
 * binds to the LDAP directory (a NAS, a mail client), so an account with a second factor or no
 * password can still use such apps, and revoking one app does not touch the others. Only the
 * SHA-256 of each is kept (it has 192 random bits: nothing to guess, nothing to stretch).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('app_password', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.string('secret_hash', 64).notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['account_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('app_password');
}
