/**
 * Sign-in by a mailed code. Each request keeps one row: the browser that asked (a hash of its
 * cookie), the address typed (its key), the code's hash, the account it was mailed to (none when
 * the address has no account: the answer is the same, the row proves nothing), how many wrong
 * codes were tried, and when it was spent. The switch is the `signin_by_mail` action's guest
 * permission, closed as a new store makes it (as guest signup is).
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';

const SIGNIN_BY_MAIL_CLOSED = 2097025;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_code', (t) => {
    t.increments('id').primary();
    // sha256 of the request's handle (in the link and the page), of the browser's cookie, of handle and code.
    t.string('handle_hash', 64).notNullable().unique();
    t.string('binding_hash', 64).notNullable();
    t.string('code_hash', 64).notNullable();
    t.text('email_key').notNullable();
    t.integer('account_id').nullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.integer('tries').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable().index();
    t.bigInteger('used_at').nullable();
  });
  await knex.raw('CREATE INDEX mail_code_email ON mail_code (email_key, created_at)');
  const now = Date.now();
  await knex('action').insert({
    reference_id: randomUUID(),
    on_type: 'user_account',
    action_name: 'signin_by_mail',
    label: 'Sign in with a code mailed to the address',
    permission: SIGNIN_BY_MAIL_CLOSED,
    user_account_id: null,
    created_at: now,
    updated_at: now,
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('action').where({ on_type: 'user_account', action_name: 'signin_by_mail' }).del();
  await knex.schema.dropTable('mail_code');
}
