/**
 * Directory sources: an LDAP or Active Directory server whose people and groups a sync brings in.
 * `source_entry` ties each synced account or group to its directory entry by the entry's stable id
 * (entryUUID, objectGUID), so a rename there is an update here; a person gone from the directory
 * keeps its row (`gone_at`) and its account, disabled.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('directory_source', (t) => {
    t.increments('id').primary();
    // Lower-case letters, digits and dashes.
    t.string('name', 40).notNullable().unique();
    t.string('url', 500).notNullable();
    t.boolean('start_tls').notNullable().defaultTo(false);
    /** PEM of the certificate authority the directory's certificate must chain to (null: the system's). */
    t.text('ca_certificate').nullable();
    t.string('bind_dn', 500).notNullable();
    t.text('bind_password').notNullable();
    t.string('base_dn', 500).notNullable();
    t.string('user_filter', 1000).notNullable();
    t.string('group_filter', 1000).notNullable();
    t.string('uid_attribute', 64).notNullable();
    t.string('id_attribute', 64).notNullable();
    /** Seconds between syncs; null: only on demand. */
    t.integer('every_seconds').nullable();
    t.boolean('keep_passwords').notNullable().defaultTo(false);
    /** When the next sync is due: claimed by a conditional update, so one instance runs it. */
    t.bigInteger('next_sync_at').nullable();
    t.bigInteger('last_sync_at').nullable();
    /** ok | failed, and what the last sync did or why it failed (JSON). */
    t.string('last_status', 16).nullable();
    t.text('last_result').nullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('source_entry', (t) => {
    t.increments('id').primary();
    t.integer('source_id').notNullable().references('id').inTable('directory_source').onDelete('CASCADE');
    // person | group
    t.string('kind', 8).notNullable();
    /** The entry's id attribute, as text (objectGUID in its usual braced-hex form). */
    t.string('entry_id', 100).notNullable();
    t.string('dn', 1000).notNullable();
    t.integer('account_id').nullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.integer('usergroup_id').nullable().references('id').inTable('usergroup').onDelete('CASCADE');
    /** When a sync found the person gone from the directory (and disabled the account). */
    t.bigInteger('gone_at').nullable();
    /** A synced person's first sign-in (audited once, as such). */
    t.bigInteger('first_signin_at').nullable();
    t.unique(['source_id', 'kind', 'entry_id']);
    t.unique(['account_id']);
    t.unique(['usergroup_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('source_entry');
  await knex.schema.dropTable('directory_source');
}
