/** Single-use TOTP recovery codes, stored only as SHA-256 hashes. */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('recovery_code', (t) => {
    t.increments('id').primary();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('code_hash', 64).notNullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['account_id', 'code_hash']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('recovery_code');
}
