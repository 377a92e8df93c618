/**
 * Look-alike addresses, the skeleton made stricter: an address's domain is read with its IDNA
 * A-labels decoded (`victim@xn--exmple-4nf.com` is `victim@exаmple.com`, a Cyrillic а), and the
 * two prototypes of a thin upright stroke (`i` and `l`: Cyrillic `ӏ` looks like an `l` but UTS #39
 * maps it to `i`) are one. Every account's email_skeleton is computed again here, exactly as
 * src/accounts/lookalikes.ts now computes it (written out again: a migration never imports the
 * application's code). Accounts that now share a skeleton stay as they are (the index is not
 * unique); only new addresses are checked against it.
 */
import { domainToUnicode } from 'node:url';
import type { Knex } from 'knex';

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/** Rows updated by one statement: 2 parameters each, well under SQLite's and PostgreSQL's limits. */
const BATCH = 500;

/** The address with each A-label of its domain decoded (one that is not valid punycode kept). */
function readableDomain(key: string): string {
  const at = key.lastIndexOf('@');
  if (at < 0) return key;
  const labels = key
    .slice(at + 1)
    .split('.')
    .map((label) => (/^xn--/i.test(label) ? domainToUnicode(label) || label : label));
  return `${key.slice(0, at + 1)}${labels.join('.')}`;
}

/** Writes `skeleton(email_key)` into every account's email_skeleton, 500 rows a statement. */
async function refresh(knex: Knex, skeleton: (key: string) => string): Promise<void> {
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

export async function up(knex: Knex): Promise<void> {
  const { default: toPrototypes } = await import('unhomoglyph');
  await refresh(knex, (key) => toPrototypes(readableDomain(key).normalize('NFD').replace(IGNORABLE, '')).normalize('NFD').replace(/i/g, 'l'));
}

/** The skeletons of the earlier rule, as 20261213000000_email_skeletons computed them. */
export async function down(knex: Knex): Promise<void> {
  const { default: toPrototypes } = await import('unhomoglyph');
  await refresh(knex, (key) => toPrototypes(key.normalize('NFD').replace(IGNORABLE, '')).normalize('NFD'));
}
