/**
 * Passkeys (contract section 12): WebAuthn credentials of accounts, the challenges of ceremonies
 * in progress (in the store, so any instance finishes what another began), and how each session
 * was signed in (for the OpenID Connect `amr` claim). The three passkey actions are open to
 * guests as signin is: passkey_options and passkey_signin serve sign-in, and passkey_register
 * both adds a passkey (signed in) and finishes a passkey-only signup (which the signup action's
 * own permission still governs).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
// Permission values written out: a migration is frozen (see 20261122000000_initial.ts).
const SIGNUP_OPEN = 2097057;

const ACTIONS: Array<[string, string]> = [
  ['passkey_options', 'Begin a passkey ceremony'],
  ['passkey_register', 'Add a passkey (or sign up with one)'],
  ['passkey_signin', 'Sign in with a passkey'],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('passkey', (t) => {
    t.increments('id').primary();
    t.string('reference_id', 36).notNullable().unique();
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    // base64url of the credential id (at most 1023 bytes by WebAuthn Level 3): unique across accounts.
    t.string('credential_id', 1400).notNullable().unique();
    // base64url of the COSE public key.
    t.text('public_key').notNullable();
    t.bigInteger('counter').notNullable().defaultTo(0);
    /** JSON array of transports the authenticator named (usb, internal, hybrid, …). */
    t.text('transports').notNullable();
    t.string('name', 100).notNullable();
    t.boolean('backed_up').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_used_at').nullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('webauthn_challenge', (t) => {
    // base64url of 32 random bytes: the challenge itself is the key, and is spent by deleting it.
    t.string('challenge', 64).primary();
    // signin | register | signup
    t.string('purpose', 16).notNullable();
    t.integer('account_id').nullable().references('id').inTable('user_account').onDelete('CASCADE');
    /** For a signup: the JSON of the email and name the account will have. */
    t.text('pending').nullable();
    t.bigInteger('expires_at').notNullable().index();
  });
  await knex.schema.alterTable('session', (t) => {
    // password | passkey: how the session was signed in (amr).
    t.string('method', 16).notNullable().defaultTo('password');
  });
  const now = Date.now();
  for (const [name, label] of ACTIONS) {
    await knex('action').insert({
      reference_id: randomUUID(),
      on_type: 'user_account',
      action_name: name,
      label,
      permission: SIGNUP_OPEN,
      user_account_id: null,
      created_at: now,
      updated_at: now,
    });
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex('action')
    .whereIn(
      'action_name',
      ACTIONS.map((a) => a[0]),
    )
    .del();
  await knex.schema.alterTable('session', (t) => {
    t.dropColumn('method');
  });
  await knex.schema.dropTable('webauthn_challenge');
  await knex.schema.dropTable('passkey');
}
