/**
 * How strongly a session signed in, and which apps it signed in to. A session keeps when the
 * person last proved who they are in it (a password, passkey or second factor entered: the
 * `auth_time` apps are told and the "recent sign-in" some changes need), which second factor it
 * passed, and what an upstream
 * provider said of its own sign-in (its `amr`). OpenID Connect clients and SAML service providers
 * may demand a second factor. Each OpenID Connect client a session signed in to is kept, so the
 * session's end can be told to it (back-channel logout).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('session', (t) => {
    t.bigInteger('authenticated_at').nullable();
    t.text('upstream_amr').nullable();
    // Which second factor it passed, when it did: a TOTP code ('otp') or a passkey ('hwk').
    t.string('second_factor', 8).nullable();
  });
  await knex('session').where({ two_factor: true }).whereNot({ method: 'passkey' }).update({ second_factor: 'otp' });
  await knex('session').update({ authenticated_at: knex.ref('created_at') });
  await knex.schema.alterTable('oidc_client', (t) => {
    t.boolean('two_factor').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('saml_sp', (t) => {
    t.boolean('two_factor').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('oidc_signin', (t) => {
    // Gone with the session (its rows are pruned) or the client.
    t.string('session_id', 32).notNullable().references('id').inTable('session').onDelete('CASCADE');
    t.string('client_id', 64).notNullable().references('client_id').inTable('oidc_client').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.primary(['session_id', 'client_id']);
  });
  await knex.raw('CREATE INDEX oidc_signin_client ON oidc_signin (client_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oidc_signin');
  await knex.schema.alterTable('saml_sp', (t) => t.dropColumn('two_factor'));
  await knex.schema.alterTable('oidc_client', (t) => t.dropColumn('two_factor'));
  await knex.schema.alterTable('session', (t) => {
    t.dropColumn('second_factor');
    t.dropColumn('upstream_amr');
    t.dropColumn('authenticated_at');
  });
}
