/**
 * Usernames (contract section 15): every account gets a unique `username`, the name it binds to
 * the LDAP directory with (uid) and OIDC's preferred_username. Existing accounts get one from
 * their email's local part, made unique with a number (ann, ann2, …). Lower case, `[a-z0-9]`
 * first, then `[a-z0-9._-]`, at most 64 characters.
 */
import type { Knex } from 'knex';

/** The local part, kept to the allowed characters (this migration's own copy: migrations do not change). */
const base = (email: string) =>
  (
    email
      .split('@')[0]
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, '')
      .replace(/^[._-]+/, '') || 'user'
  ).slice(0, 56);

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.string('username', 64).nullable();
  });
  const taken = new Set<string>();
  const rows: Array<{ id: number; email: string }> = await knex('user_account').select('id', 'email').orderBy('id');
  for (const row of rows) {
    const b = base(row.email);
    let name = b;
    for (let n = 2; taken.has(name); n++) name = `${b}${n}`;
    taken.add(name);
    await knex('user_account').where({ id: row.id }).update({ username: name });
  }
  await knex.schema.alterTable('user_account', (t) => {
    t.unique(['username']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.dropUnique(['username']);
    t.dropColumn('username');
  });
}
