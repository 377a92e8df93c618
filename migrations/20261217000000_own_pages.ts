/**
 * People's own pages: a mailed link that ends one session (a sign-in from a new browser or place
 * is told by mail) is an account token bound to that session (`session_id`), and the new
 * self-service actions: sign out everywhere else, the connected apps (list, revoke one), one's
 * data as JSON, deleting one's own account; and the mailed link's `end_session` for guests (it
 * carries a one-time token).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
// Permission values written out: a migration is frozen (see 20261122000000_initial.ts).
const SIGNUP_OPEN = 2097057;
const SELF_SERVICE = 589697; // guest peek; owner all; group peek, read, execute
const ACTIONS: Array<[string, string, number, boolean]> = [
  // [action_name, label, permission, executable through the users group]
  ['signout_others', 'Sign out everywhere else', SELF_SERVICE, true],
  ['list_apps', 'List the apps I signed in to', SELF_SERVICE, true],
  ['revoke_app', 'Revoke an app’s access', SELF_SERVICE, true],
  ['export_data', 'Download my data', SELF_SERVICE, true],
  ['delete_account', 'Delete my account', SELF_SERVICE, true],
  ['end_session', 'End a session (the mailed link)', SIGNUP_OPEN, false],
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('account_token', (t) => {
    t.string('session_id', 32).nullable();
  });
  const now = Date.now();
  const users = await knex('usergroup').where({ system_role: 'users' }).first('id');
  for (const [name, label, permission, selfService] of ACTIONS) {
    const [row] = await knex('action')
      .insert({
        reference_id: randomUUID(),
        on_type: 'user_account',
        action_name: name,
        label,
        permission,
        user_account_id: null,
        created_at: now,
        updated_at: now,
      })
      .returning('id');
    const id = Number(typeof row === 'object' ? row.id : row);
    if (selfService) await knex('record_usergroup').insert({ record_type: 'action', record_id: id, usergroup_id: users.id });
  }
}

export async function down(knex: Knex): Promise<void> {
  const ids = (
    await knex('action')
      .where({ on_type: 'user_account' })
      .whereIn(
        'action_name',
        ACTIONS.map((a) => a[0]),
      )
      .select('id')
  ).map((r: { id: number }) => r.id);
  await knex('record_usergroup').where({ record_type: 'action' }).whereIn('record_id', ids).del();
  await knex('action').whereIn('id', ids).del();
  // The statement itself on both dialects (knex's dropColumn rebuilds the table on SQLite).
  await knex.raw('ALTER TABLE account_token DROP COLUMN session_id');
}
