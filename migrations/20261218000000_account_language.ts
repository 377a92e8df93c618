/**
 * The language a person chose on /account for pages and mails (en, de, fr); null: as the
 * browser asks (Accept-Language), else the server's --default-language.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.string('language', 8).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.dropColumn('language');
  });
}
