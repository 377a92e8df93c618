/**
 * Where a person came from (contract section 24): `origin` on each account, null for one made
 * here (a signup, the shell, the console, an invitation, SCIM provisioning), else what made it
 * elsewhere: an import's format ('keycloak', 'authelia', 'auth0', 'csv'). Set once, when the
 * account is made; `gatehouse stats` and GET /statistics count people by it. No CHECK constraint:
 * the names are a typed list in the code (store/accounts.ts ACCOUNT_ORIGINS), and a new one
 * (a directory source's) is then a line there, not a rebuilt table on SQLite. Existing accounts
 * stay null: nothing recorded where they came from.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.text('origin').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  // The statement itself, on both dialects (SQLite has it since 3.35): knex's dropColumn rebuilds
  // the table on SQLite, and dropping the old user_account inside the migration's transaction
  // (foreign keys on) would cascade, deleting every membership, session and token with it.
  await knex.raw('ALTER TABLE user_account DROP COLUMN origin');
}
