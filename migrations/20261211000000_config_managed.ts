/**
 * What a configuration file manages: one row per object an apply made or took over (its kind and
 * name), with the file it came from. Only the ones an apply made are ever deleted by a later one, and the
 * console and the shell's add/remove commands leave them alone (they name the file instead).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('config_managed', (t) => {
    t.string('kind', 32).notNullable();
    // The object's name in its kind, as the file keys it (lower case where names ignore case).
    t.string('name', 200).notNullable();
    t.text('file').notNullable();
    // Whether an apply made it (deleted once the file no longer names it) or took over one made
    // by hand (then only let go: objects made by hand are never deleted by a file).
    t.boolean('made').notNullable().defaultTo(true);
    t.bigInteger('applied_at').notNullable();
    t.primary(['kind', 'name']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('config_managed');
}
