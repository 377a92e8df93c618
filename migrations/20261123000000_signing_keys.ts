/**
 * Asymmetric signing keys (RS256 by default, ES256 on request), shared by every instance on one
 * database; the public halves are the JWKS. A store that signed with the HS256 secret keeps
 * accepting those tokens until they expire: `jwt_secret_issued_before` marks the upgrade, and
 * no HS256 token is issued after it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('signing_key', (t) => {
    t.string('kid', 64).primary();
    t.string('alg', 16).notNullable();
    // PKCS#8 PEM. Never printed, logged or served; the JWKS carries public_jwk only.
    t.text('private_key').notNullable();
    t.text('public_jwk').notNullable();
    t.bigInteger('created_at').notNullable();
    // Set when a newer key took over signing (rotate) or the key was withdrawn (retire).
    t.bigInteger('retired_at').nullable();
    // Tokens it signed verify until then; null while it signs.
    t.bigInteger('verify_until').nullable();
  });
  await knex('write_lock').insert({ name: 'signing_keys', counter: 0 });
  const secret = await knex('gatehouse_setting').where({ name: 'jwt_secret' }).first('name');
  if (secret) await knex('gatehouse_setting').insert({ name: 'jwt_secret_issued_before', value: String(Date.now()) });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('signing_key');
  await knex('write_lock').where({ name: 'signing_keys' }).del();
  await knex('gatehouse_setting').where({ name: 'jwt_secret_issued_before' }).del();
}
