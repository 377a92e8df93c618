/**
 * Invitations (contract section 13): an administrator invites an email address; the mailed link
 * opens signup for that address alone, even while guest signup is closed, and is spent by the
 * account it makes. Only the token's SHA-256 is kept. The invite action is for administrators.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

const ADMINISTRATORS_ONLY = 65408; // owner all; group peek, read

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('invitation', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.string('email', 254).notNullable();
    t.string('email_key', 254).notNullable().index();
    t.string('token_hash', 64).notNullable().unique();
    /** JSON array of the group reference_ids the account joins. */
    t.text('groups').notNullable();
    t.boolean('administrator').notNullable().defaultTo(false);
    t.integer('created_by').nullable().references('id').inTable('user_account').onDelete('SET NULL');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('used_at').nullable();
    t.bigInteger('revoked_at').nullable();
    t.integer('account_id').nullable().references('id').inTable('user_account').onDelete('SET NULL');
  });
  const now = Date.now();
  await knex('action').insert({
    reference_id: randomUUID(),
    on_type: 'user_account',
    action_name: 'invite',
    label: 'Invite someone by email',
    permission: ADMINISTRATORS_ONLY,
    user_account_id: null,
    created_at: now,
    updated_at: now,
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('action').where({ action_name: 'invite' }).del();
  await knex.schema.dropTable('invitation');
}
