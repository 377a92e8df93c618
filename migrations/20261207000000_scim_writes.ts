/**
 * SCIM writes: usernames widen to email-shaped names of up to 128 characters (contract section
 * 19: the userName a provisioning service sends, as Entra ID's UPNs are), and a group keeps the
 * externalId a service gives it. SQLite does not enforce a column's declared length; PostgreSQL's
 * column grows. Existing names are unchanged.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') await knex.raw('ALTER TABLE user_account ALTER COLUMN username TYPE varchar(128)');
  await knex.schema.alterTable('usergroup', (t) => {
    t.text('external_id');
  });
}

export async function down(knex: Knex): Promise<void> {
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
