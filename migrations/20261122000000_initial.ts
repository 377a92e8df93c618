/**
 * The record tables, their permissions and the built-in actions.
 * Times are epoch milliseconds (bigint) so SQLite and PostgreSQL store them alike.
 */
import type { Knex } from 'knex';
import { randomUUID } from 'node:crypto';
// The 21-bit values are written out: a migration is frozen, and must not change if src/permission/bits.ts
// ever does (test/unit/migrations-frozen.test.ts checks each value against its meaning today).
/** The signup action open to guests: guest peek+execute, owner and group everything. */
const SIGNUP_OPEN = 2097057;
/** Self-service actions: every signed-in account (through the `users` group), no guest. */
const SELF_SERVICE = 589697; // guest peek; owner all; group peek, read, execute
/** Guest-executable actions (signin, password recovery, email verification). */
const GUEST_ACTION = SIGNUP_OPEN;

function common(t: Knex.CreateTableBuilder, knex: Knex) {
  t.increments('id').primary();
  t.string('reference_id', 36).notNullable().unique();
  t.integer('permission').notNullable();
  t.integer('user_account_id').nullable().references('id').inTable('user_account').onDelete('SET NULL');
  t.bigInteger('created_at').notNullable();
  t.bigInteger('updated_at').notNullable();
  void knex;
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_account', (t) => {
    common(t, knex);
    t.string('email', 254).notNullable();
    // Lower-cased NFC form of the email: uniqueness and lookups ignore case.
    t.string('email_key', 254).notNullable().unique();
    t.string('name', 100).notNullable();
    t.string('password', 255).notNullable();
    t.integer('auth_version').notNullable().defaultTo(1);
    t.boolean('disabled').notNullable().defaultTo(false);
    t.boolean('email_verified').notNullable().defaultTo(false);
    t.string('totp_secret', 64).nullable();
    t.boolean('totp_enabled').notNullable().defaultTo(false);
    t.bigInteger('totp_last_step').nullable();
  });

  await knex.schema.createTable('usergroup', (t) => {
    common(t, knex);
    t.string('name', 100).notNullable();
    // 'administrators' or 'users' for the two system groups; null for every other group.
    t.string('system_role', 32).nullable().unique();
  });

  await knex.schema.createTable('membership', (t) => {
    common(t, knex);
    t.integer('account_id').notNullable().references('id').inTable('user_account').onDelete('CASCADE');
    t.integer('usergroup_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.unique(['account_id', 'usergroup_id']);
    t.index(['usergroup_id']);
  });

  await knex.schema.createTable('world', (t) => {
    common(t, knex);
    t.string('table_name', 64).notNullable().unique();
    // Permission given to new rows of this type.
    t.integer('default_permission').notNullable();
  });

  await knex.schema.createTable('action', (t) => {
    common(t, knex);
    t.string('on_type', 64).notNullable();
    t.string('action_name', 64).notNullable();
    t.string('label', 200).notNullable();
    t.unique(['on_type', 'action_name']);
  });

  // Which groups a row belongs to (group bits of its permission apply to their members).
  await knex.schema.createTable('record_usergroup', (t) => {
    t.increments('id').primary();
    t.string('record_type', 64).notNullable();
    t.integer('record_id').notNullable();
    t.integer('usergroup_id').notNullable().references('id').inTable('usergroup').onDelete('CASCADE');
    t.unique(['record_type', 'record_id', 'usergroup_id']);
  });

  await knex.schema.createTable('gatehouse_setting', (t) => {
    t.string('name', 64).primary();
    t.text('value').notNullable();
  });

  // One row per lock name; writers update it first so concurrent account writes queue
  // (SQLite: takes the write lock at once; PostgreSQL: a row lock) instead of racing.
  await knex.schema.createTable('write_lock', (t) => {
    t.string('name', 64).primary();
    t.bigInteger('counter').notNullable().defaultTo(0);
  });

  const now = Date.now();
  const row = (fields: Record<string, unknown>) => ({
    reference_id: randomUUID(),
    user_account_id: null,
    created_at: now,
    updated_at: now,
    ...fields,
  });

  await knex('write_lock').insert([{ name: 'accounts', counter: 0 }]);

  await knex('usergroup').insert([
    row({ name: 'administrators', system_role: 'administrators', permission: 49152 /* group peek, read */ }),
    row({ name: 'users', system_role: 'users', permission: 16384 /* group peek */ }),
  ]);
  const users = await knex('usergroup').where({ system_role: 'users' }).first('id');

  const worlds = [
    {
      table_name: 'user_account',
      permission: 262020, // guest create; owner all; group peek, read, create, update
      default_permission: 1408, // owner peek, read, update
    },
    {
      table_name: 'usergroup',
      permission: 524164, // guest create; owner all; group peek, read, create, update, delete
      default_permission: 60800, // owner peek, read, update, delete, refer; group peek, read
    },
    {
      table_name: 'membership',
      permission: 1114048, // guest refer; owner all; group peek, read, refer
      default_permission: 51584, // owner peek, read, delete; group peek, read
    },
    {
      table_name: 'action',
      permission: 65408, // owner all; group peek, read
      default_permission: 2097025, // guest peek; owner all; group all
    },
    {
      table_name: 'world',
      permission: 65408, // owner all; group peek, read
      default_permission: 65408, // owner all; group peek, read
    },
  ];
  await knex('world').insert(worlds.map(row));

  const actions: Array<[string, string, string, number, boolean]> = [
    // [on_type, action_name, label, permission, executable through the users group]
    ['user_account', 'signup', 'Sign up', SIGNUP_OPEN, false],
    ['user_account', 'signin', 'Sign in', GUEST_ACTION, false],
    ['user_account', 'reset_password_request', 'Request a password reset', GUEST_ACTION, false],
    ['user_account', 'reset_password', 'Reset the password', GUEST_ACTION, false],
    ['user_account', 'verify_email', 'Verify the email address', GUEST_ACTION, false],
    ['user_account', 'change_password', 'Change the password', SELF_SERVICE, true],
    ['user_account', 'change_email', 'Change the email address', SELF_SERVICE, true],
    ['user_account', 'signout_everywhere', 'Sign out everywhere', SELF_SERVICE, true],
    ['user_account', 'request_verification', 'Send a verification email', SELF_SERVICE, true],
    ['user_account', 'totp_enroll', 'Start TOTP enrolment', SELF_SERVICE, true],
    ['user_account', 'totp_confirm', 'Confirm TOTP enrolment', SELF_SERVICE, true],
    ['user_account', 'totp_disable', 'Turn TOTP off', SELF_SERVICE, true],
    ['world', 'become_an_administrator', 'Become the administrator', SELF_SERVICE, true],
  ];
  await knex('action').insert(actions.map(([on_type, action_name, label, permission]) => row({ on_type, action_name, label, permission })));

  const selfService = await knex('action')
    .whereIn(
      'action_name',
      actions.filter((a) => a[4]).map((a) => a[1]),
    )
    .select('id');
  const worldIds = await knex('world').select('id');
  await knex('record_usergroup').insert([
    ...selfService.map((a: { id: number }) => ({ record_type: 'action', record_id: a.id, usergroup_id: users.id })),
    ...worldIds.map((w: { id: number }) => ({ record_type: 'world', record_id: w.id, usergroup_id: users.id })),
  ]);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['record_usergroup', 'action', 'world', 'membership', 'usergroup', 'user_account', 'gatehouse_setting', 'write_lock']) {
    await knex.schema.dropTableIfExists(t);
  }
}
