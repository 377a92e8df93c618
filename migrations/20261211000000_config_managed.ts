/**
 * What a configuration file manages: one row per object an apply made or took over (its kind and
 * name), with the file it came from. Only these are ever deleted by a later apply, and the
 * console and the shell's add/remove commands leave them alone (they name the file instead).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('config_managed', (t) => {
    t.string('kind', 32).notNullable();
    // The object's name in its kind, as the file keys it (lower case where names ignore case).
    t.string('name', 200).notNullable();
    t.text('file').notNullable();
    t.bigInteger('applied_at').notNullable();
    t.primary(['kind', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('config_managed');
}
