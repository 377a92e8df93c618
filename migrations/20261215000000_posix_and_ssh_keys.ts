/**
 * Linux hosts over the directory: every account and every group (but an account's dedicated
 * group, whose number is its account's) gets a POSIX number once, from one counter shared by
 * both, so a person's user-private group never meets a group's number. Numbers given here to the
 * rows that exist, in the order they were made, from 10000 (the default base); the counter then
 * stands past them and only ever grows, so a number is never given twice, even after a deletion.
 * An account's login shell (null: the default) and its SSH public keys.
 */
import type { Knex } from 'knex';

const BASE = 10000;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.bigInteger('posix_id').nullable().unique();
    t.string('login_shell', 200).nullable();
  });
  await knex.schema.alterTable('usergroup', (t) => {
    t.bigInteger('posix_id').nullable().unique();
  });
  await knex.schema.createTable('posix_counter', (t) => {
    t.string('name', 20).primary();
    /** The base the numbers were given from (--posix-id-base, or 10000). */
    t.bigInteger('base').notNullable();
    /** The next number to give: every number given is below it. */
    t.bigInteger('next_id').notNullable();
    /** The lowest number ever given; null: none yet. */
    t.bigInteger('low').nullable();
  });
  await knex.schema.createTable('ssh_key', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('key_type', 60).notNullable();
    /** The key's wire form, base64, as authorized_keys holds it. */
    t.text('key_data').notNullable();
    t.string('comment', 200).notNullable();
    /** SHA256:… as ssh-keygen -l prints it. */
    t.string('fingerprint', 60).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['account_id', 'fingerprint']);
  });
  const [{ n: accounts }] = await knex('user_account').count({ n: '*' });
  const people = Number(accounts);
  await knex.raw(
    `UPDATE user_account SET posix_id = n.num FROM (SELECT id, ? - 1 + ROW_NUMBER() OVER (ORDER BY id) AS num FROM user_account) n WHERE n.id = user_account.id`,
    [BASE],
  );
  // A dedicated group: the first group an account owns that is no system group.
  const numbered = `SELECT g.id FROM usergroup g WHERE NOT (g.user_account_id IS NOT NULL AND g.system_role IS NULL AND g.id =
    (SELECT MIN(d.id) FROM usergroup d WHERE d.user_account_id = g.user_account_id AND d.system_role IS NULL))`;
  await knex.raw(
    `UPDATE usergroup SET posix_id = n.num FROM (SELECT id, ? - 1 + ROW_NUMBER() OVER (ORDER BY id) AS num FROM usergroup WHERE id IN (${numbered})) n
     WHERE n.id = usergroup.id`,
    [BASE + people],
  );
  const [{ n: groupCount }] = await knex('usergroup').whereNotNull('posix_id').count({ n: '*' });
  const given = people + Number(groupCount);
  await knex('posix_counter').insert({ name: 'posix', base: BASE, next_id: BASE + given, low: given > 0 ? BASE : null });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ssh_key');
  await knex.schema.dropTable('posix_counter');
  await knex.schema.alterTable('usergroup', (t) => {
    t.dropUnique(['posix_id']);
    t.dropColumn('posix_id');
  });
  await knex.schema.alterTable('user_account', (t) => {
    t.dropUnique(['posix_id']);
    t.dropColumn('posix_id');
    t.dropColumn('login_shell');
  });
}
