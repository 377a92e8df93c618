/** Security events (signins, lockouts, TOTP replays, permission changes, bootstrap, revocations). */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_event', (t) => {
    t.increments('id').primary();
    t.bigInteger('created_at').notNullable();
    t.string('event', 64).notNullable();
    // The account's public reference_id (kept even after the account is deleted).
    t.string('account', 36).nullable();
    t.string('client', 64).nullable();
    // Other fields as JSON: never a password, token, secret or code.
    t.text('details').notNullable();
    t.index(['created_at']);
    t.index(['account', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('audit_event');
}
