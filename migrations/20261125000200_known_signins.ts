/**
 * Where each account signed in successfully before (a client address, IPv6 grouped by /64): a
 * signin from there is not held back by failures from elsewhere, so nobody can lock the owner
 * out everywhere by failing on purpose from many addresses.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
// Permission value written out: a migration is frozen (see 20261122000000_initial.ts).
const SIGNUP_OPEN = 2097057;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('known_signin', (t) => {
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.string('signin_key', 100).notNullable();
    t.bigInteger('last_at').notNullable();
    t.primary(['account_id', 'signin_key']);
    t.index(['last_at']);
  });
  // The owner's mailed link that lifts the delay: guests run it (it carries a one-time token).
  const now = Date.now();
  await knex('action').insert({
    reference_id: randomUUID(),
    on_type: 'user_account',
    action_name: 'unlock_signin',
    label: 'Lift the signin delay (the mailed link)',
    permission: SIGNUP_OPEN,
    user_account_id: null,
    created_at: now,
    updated_at: now,
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('action').where({ on_type: 'user_account', action_name: 'unlock_signin' }).del();
  await knex.schema.dropTable('known_signin');
}
