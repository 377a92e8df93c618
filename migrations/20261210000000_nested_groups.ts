/**
 * Groups inside groups. `usergroup_nesting` holds the edges an operator makes (this group is a
 * member of that one); `usergroup_closure` holds every pair (ancestor, descendant) they imply,
 * so a person's groups are one join, never a walk. The
 * closure is kept by the statements that change the edges (store/nesting.ts), in their
 * transaction.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('usergroup_nesting', (t) => {
    t.integer('parent_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.integer('child_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.primary(['parent_id', 'child_id']);
  });
  await knex.raw('CREATE INDEX usergroup_nesting_child ON usergroup_nesting (child_id)');
  await knex.schema.createTable('usergroup_closure', (t) => {
    t.integer('ancestor_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.integer('descendant_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.primary(['ancestor_id', 'descendant_id']);
  });
  await knex.raw('CREATE INDEX usergroup_closure_descendant ON usergroup_closure (descendant_id, ancestor_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('usergroup_closure');
  await knex.schema.dropTable('usergroup_nesting');
}
