/**
 * Look-alike addresses: every account keeps its address's confusable skeleton (Unicode Technical
 * Standard #39), so a new address that looks like another account's (`a@exаmple.com`, a Cyrillic
 * а, beside `a@example.com`) is found by an indexed lookup and refused. Filled here for the
 * accounts already there, from their identity key, exactly as src/accounts/lookalikes.ts computes
 * it (written out again: a migration never imports the application's code).
 *
 * The index is not unique: two accounts made before this migration may already share a skeleton
 * (they stay, and a unique index would fail the upgrade), and an operator may let a look-alike in
 * on purpose. The check is made under the accounts' lock, in the transaction that writes.
 */
import type { Knex } from 'knex';

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/** Rows updated by one statement: 2 parameters each, well under SQLite's and PostgreSQL's limits. */
const BATCH = 500;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.text('email_skeleton').nullable();
    t.index(['email_skeleton'], 'user_account_email_skeleton_index');
  });
  const { default: toPrototypes } = await import('unhomoglyph');
  const skeleton = (key: string) => toPrototypes(key.normalize('NFD').replace(IGNORABLE, '')).normalize('NFD');
  let after = 0;
  for (;;) {
    const rows: Array<{ id: number | string; email_key: string }> = await knex('user_account')
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .select('id', 'email_key');
    if (rows.length === 0) break;
    const cases = rows.map(() => 'WHEN ? THEN ?').join(' ');
    const params = rows.flatMap((r) => [Number(r.id), skeleton(r.email_key)]);
    const ids = rows.map((r) => Number(r.id));
    await knex.raw(`UPDATE user_account SET email_skeleton = CASE id ${cases} END WHERE id IN (${ids.map(() => '?').join(', ')})`, [...params, ...ids]);
    after = ids[ids.length - 1];
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('user_account', (t) => {
    t.dropIndex(['email_skeleton'], 'user_account_email_skeleton_index');
    t.dropColumn('email_skeleton');
  });
}
