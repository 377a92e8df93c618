/**
 * The longest access-token lifetime any instance signs with each key (seconds). A rotation keeps
 * the old key verifying that long, not for the lifetime of whichever process ran `keys rotate`
 * (the shell's default of 1 h, while servers with --token-ttl 24h sign day-long tokens).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_key', (t) => {
    t.integer('max_token_ttl').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('signing_key', (t) => {
    t.dropColumn('max_token_ttl');
  });
}
