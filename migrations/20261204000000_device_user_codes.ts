/**
 * The device flow (RFC 8628): a person types the user code a device shows, and the provider finds
 * the device code by it. The code is kept in a column of its own, indexed, beside the payload.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('oidc_payload', (t) => {
    t.text('user_code');
  });
  await knex.raw('CREATE INDEX oidc_payload_user_code ON oidc_payload (model, user_code)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX oidc_payload_user_code');
  await knex.schema.alterTable('oidc_payload', (t) => {
    t.dropColumn('user_code');
  });
}
