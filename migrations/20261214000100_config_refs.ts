/**
 * The secret references a configuration file gave each object it manages (`{file: PATH}` or
 * `{env: NAME}`, never a value), as JSON by the entry's key: `config export` writes them back as
 * they were applied, so an export plans as nothing to change on the store it came from. Null: none
 * recorded (an object with no secret, or managed before this migration; its export names a
 * variable instead, as it did).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('config_managed', (t) => {
    t.text('refs').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('config_managed', (t) => {
    t.dropColumn('refs');
  });
}
