/**
 * Providers that speak OAuth 2.0 but not OpenID Connect (GitHub, and any other with an
 * authorization, a token and a user-info endpoint). A provider has a kind (`oidc`, as every
 * provider made before, `github` or `oauth2`) and the settings of its kind as JSON: the addresses
 * and fields of an `oauth2` provider, GitHub's API address, organisation and team-to-group map.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('upstream_provider', (t) => {
    t.string('kind', 16).notNullable().defaultTo('oidc');
    t.text('settings').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('upstream_provider', (t) => {
    t.dropColumn('settings');
    t.dropColumn('kind');
  });
}
