/**
 * SCIM writes and pushes (contract section 19): usernames widen to email-shaped names of up to
 * 128 characters (the userName a provisioning service sends, as Entra ID's UPNs are); a group
 * keeps the externalId a service gives it; push targets (an app's SCIM endpoint and its token),
 * what each holds of Gatehouse's people and groups (the id it gave them), and their messages on
 * the one delivery queue. SQLite does not enforce a column's declared length; PostgreSQL's column
 * grows. Existing names are unchanged.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') await knex.raw('ALTER TABLE user_account ALTER COLUMN username TYPE varchar(128)');
  await knex.schema.alterTable('usergroup', (t) => {
    t.text('external_id');
  });
  await knex.schema.createTable('scim_target', (t) => {
    t.increments('id').primary();
    t.text('reference_id').notNullable().unique();
    t.text('name').notNullable().unique();
    t.text('url').notNullable();
    /** The bearer token the app gave: sent with every request, so kept as given (like a webhook's secret). */
    t.text('token').notNullable();
    /** JSON: the reference ids of the groups whose members (and which groups) are pushed; [] is everyone. */
    t.text('groups').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('scim_pushed', (t) => {
    t.integer('target_id').notNullable().references('id').inTable('scim_target').onDelete('CASCADE');
    /** A person's or a group's reference id (the externalId the target holds). */
    t.text('reference_id').notNullable();
    // User | Group
    t.string('kind', 10).notNullable();
    t.text('remote_id').notNullable();
    t.primary(['target_id', 'reference_id']);
  });
  await knex.schema.alterTable('delivery', (t) => {
    t.integer('scim_target_id').nullable().references('id').inTable('scim_target').onDelete('CASCADE');
    t.index(['scim_target_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('delivery', (t) => {
    t.dropIndex(['scim_target_id']);
    t.dropForeign(['scim_target_id']);
    t.dropColumn('scim_target_id');
  });
  await knex.schema.dropTable('scim_pushed');
  await knex.schema.dropTable('scim_target');
  await knex.schema.alterTable('usergroup', (t) => {
    t.dropColumn('external_id');
  });
  // Narrowing back would cut names a newer Gatehouse accepted: refused rather than done.
  if (knex.client.config.client === 'pg') {
    const [row] = (await knex('user_account').max({ n: knex.raw('length(username)') })) as Array<{ n: number | null }>;
    if (Number(row?.n ?? 0) > 64) throw new Error('an account has a username longer than 64 characters; rename it before migrating down');
    await knex.raw('ALTER TABLE user_account ALTER COLUMN username TYPE varchar(64)');
  }
}
