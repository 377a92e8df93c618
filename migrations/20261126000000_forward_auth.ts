/**
 * Forward authentication (contract section 11): the apps behind reverse proxies and who may open
 * them, and whether a session passed a second factor (apps that require two-factor admit only
 * those sessions).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('forward_app', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    // Lower-case host name, without port; an app may cover only some path prefixes of it.
    t.string('host', 253).notNullable().index();
    /** JSON arrays of path prefixes ([] for the whole host) and of group reference_ids ([]: any account). */
    t.text('paths').notNullable();
    t.text('allowed_groups').notNullable();
    t.text('bypass_paths').notNullable();
    t.boolean('two_factor').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.alterTable('session', (t) => {
    t.boolean('two_factor').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('session', (t) => {
    t.dropColumn('two_factor');
  });
  await knex.schema.dropTable('forward_app');
}
