// Upgrades on PostgreSQL: for each earlier schema, a database made by the migrations up to it,
// holding the rows of that schema's fixture (test/fixtures/stores), is migrated by today's code
// (PostgreSQL's own statements: its column types, its trigram indexes, its ALTERs on tables that
// hold rows), keeps every row, and the commands read everything back.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import t from 'tap';
import { cli } from '../helpers/cli';
import { freshDatabase, pgReachable } from '../helpers/pg';
import { tempDir } from '../helpers/server';
import { FIXTURES, invitationOpenIn, manifest, query, readsEverything, storeTables } from '../helpers/store-fixtures';
import { MIGRATIONS } from '../../src/store/migrations';

/** The migrations up to `schema` on an empty database, then the fixture's rows copied in (its tables in the order they were made). */
async function databaseAt(pg: Knex, schema: string, sqliteFile: string): Promise<Record<string, number>> {
  const n = MIGRATIONS.findIndex(([name]) => name === schema) + 1;
  await pg.migrate.latest({
    migrationSource: { getMigrations: async () => MIGRATIONS.slice(0, n), getMigrationName: ([name]) => name, getMigration: async ([, m]) => m },
  });
  const tables = await storeTables(sqliteFile);
  const counts: Record<string, number> = {};
  for (const name of tables) {
    const rows = await query(sqliteFile, `SELECT * FROM \`${name}\``);
    // Rows the migrations wrote here too (actions, system groups) are there already.
    for (const row of rows) await pg(name).insert(row).onConflict().ignore();
    counts[name] = rows.length;
    // A table with an id column from a sequence: the sequence moves past the copied ids.
    const [idColumn] = await pg('information_schema.columns')
      .where({ table_schema: pg.raw('current_schema()'), table_name: name, column_name: 'id' })
      .select('column_name');
    const serial = idColumn ? await pg.raw(`SELECT pg_get_serial_sequence(?, 'id') AS seq`, [name]) : null;
    if (serial?.rows[0].seq) await pg.raw(`SELECT setval(?, GREATEST((SELECT max(id) FROM ??), 1))`, [serial.rows[0].seq, name]);
  }
  return counts;
}

t.test('each earlier schema on PostgreSQL, with its rows, migrates and keeps everything', async (t) => {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  for (const fixture of manifest.fixtures) {
    const url = await freshDatabase(t);
    const dir = tempDir(t);
    const file = path.join(dir, 'fixture.sqlite');
    fs.writeFileSync(file, execFileSync('gunzip', ['-c', path.join(FIXTURES, fixture.file)]));
    const pg = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
    let counts: Record<string, number>;
    try {
      counts = await databaseAt(pg, fixture.schema, file);
    } finally {
      await pg.destroy();
    }
    const gatehouse = (args: string[]) => cli(dir, ['--db', url, ...args]);
    const status = await gatehouse(['--json', 'migrate', 'status']);
    t.equal(status.json?.schema_version, fixture.schema, `${fixture.schema}: the database is at it`);
    const migrated = await gatehouse(['--json', 'migrate']);
    t.equal(migrated.code, 0, `${fixture.schema}: migrated ${migrated.err}`);
    const after = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
    try {
      for (const [table, n] of Object.entries(counts)) {
        const [{ count }] = await after(table).count({ count: '*' });
        if (Number(count) < n) t.fail(`${fixture.schema}: ${table} held ${n} rows, now ${count}`);
      }
    } finally {
      await after.destroy();
    }
    await readsEverything(t, gatehouse, (table) => counts[table] ?? null, await invitationOpenIn(file));
  }
});
