// A store this executable must not write: a file that is not SQLite, another program's database,
// a store from a newer Gatehouse. Each is refused by every command and by serve, with words and
// exit 6, and is left byte for byte as it was. `migrate status` reads a newer store and names
// what it does not know.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DatabaseSync } from 'node:sqlite';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { exeFolder, runExe } from '../helpers/exe';
import { freshDatabase, pgReachable } from '../helpers/pg';
import { tempDir } from '../helpers/server';
import { MIGRATIONS } from '../../src/store/migrations';

const LATEST = MIGRATIONS[MIGRATIONS.length - 1][0];
const FUTURE = '20991231000000_from_the_future';
const COMMANDS = [['stats'], ['user', 'list'], ['group', 'list'], ['keys', 'list'], ['migrate'], ['audit']];
const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

async function exec(file: string, sql: string): Promise<void> {
  const db = new DatabaseSync(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

/** Every admin command, bootstrap-admin and the executable's serve: exit 6 with `words`, the file unchanged. */
async function refusedEverywhere(t: Test, dir: string, words: RegExp) {
  const file = path.join(dir, 'gatehouse.sqlite');
  const before = digest(file);
  for (const args of COMMANDS) {
    const r = await cli(dir, ['--db', '', ...args]);
    t.equal(r.code, 6, `${args.join(' ')}: exit 6`);
    t.match(r.err, words, `${args.join(' ')}: says why`);
    t.notMatch(r.err, /SQLITE_|unexpected error/, `${args.join(' ')}: in words`);
  }
  const boot = await cli(dir, ['--db', '', 'bootstrap-admin', '--email', 'a@example.com', '--password-stdin'], { stdin: 'correct horse battery\n' });
  t.equal(boot.code, 6, 'bootstrap-admin: exit 6');
  const { exe, env, dir: cwd } = exeFolder(t);
  const served = await runExe(exe, ['serve', '--port', '0', '--data-dir', dir], { env, cwd });
  t.equal(served.code, 6, 'serve: exit 6, never listening');
  t.match(served.stderr, words, 'serve: says why');
  t.notMatch(served.stdout, /listening/);
  t.equal(digest(file), before, 'the file is byte for byte as it was');
  t.notOk(fs.existsSync(`${file}-wal`) && fs.statSync(`${file}-wal`).size > 0, 'nothing was written beside it');
}

t.test('a file that is not SQLite is said to be one, in words', async (t) => {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'gatehouse.sqlite'), Buffer.concat([Buffer.from('PK\x03\x04 a zip, say '), Buffer.alloc(4000, 7)]));
  await refusedEverywhere(t, dir, /is not a SQLite database, so not a Gatehouse store/);
  const status = await cli(dir, ['--db', '', 'migrate', 'status']);
  t.equal(status.code, 6, 'migrate status: exit 6 too');
});

t.test("another program's SQLite file is refused, never migrated into", async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.sqlite');
  await exec(file, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('mine');`);
  await refusedEverywhere(t, dir, /is not a Gatehouse store: it holds tables of its own \(notes\) and no Gatehouse migrations/);
  const db = new DatabaseSync(file, { readOnly: true });
  const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((r) => r.name);
  db.close();
  t.same(tables, ['notes'], 'no Gatehouse table was made in it');
});

t.test('a store from a newer Gatehouse: refused naming both schemas and what to do; migrate status names the unknown', async (t) => {
  const dir = tempDir(t);
  t.equal((await cli(dir, ['--db', '', 'migrate'])).code, 0);
  const before = path.join(tempDir(t), 'before-upgrade.sqlite');
  t.equal((await cli(dir, ['--db', '', 'backup', '--to', before])).code, 0, 'the backup taken before the upgrade');
  // As a newer Gatehouse would leave it (journal in DELETE mode, so the file alone is the store).
  await exec(
    path.join(dir, 'gatehouse.sqlite'),
    `PRAGMA journal_mode = DELETE; INSERT INTO knex_migrations (name, batch, migration_time) VALUES ('${FUTURE}', 99, 0);`,
  );
  await refusedEverywhere(t, dir, new RegExp(`written by a newer Gatehouse: its schema is ${FUTURE} and this executable's is ${LATEST}.*restore the backup`));
  const status = await cli(dir, ['--db', '', '--json', 'migrate', 'status']);
  t.equal(status.code, 0, 'migrate status reads it');
  t.equal(status.json.schema_version, FUTURE);
  t.equal(status.json.latest, LATEST);
  t.same(status.json.unknown, [FUTURE]);
  t.same(status.json.pending, []);
  t.equal(status.json.applied.length, MIGRATIONS.length + 1);
  const text = await cli(dir, ['--db', '', 'migrate', 'status']);
  t.match(text.out, new RegExp(`${FUTURE}\\s+unknown \\(a newer Gatehouse\\)`));

  // The rollback docs/operations.md gives: restore the backup; the newer store is kept beside it.
  const restored = await cli(dir, ['--db', '', '--json', 'restore', '--from', before]);
  t.equal(restored.code, 0, restored.err);
  t.match(restored.json.previous, /gatehouse\.sqlite\.before-restore-/);
  t.equal((await cli(dir, ['--db', '', 'stats'])).code, 0, 'this executable opens the restored store');
});

t.test('version names the schema this executable writes, the same as migrate status', async (t) => {
  const dir = tempDir(t);
  const v = await cli(dir, ['--json', 'version']);
  t.equal(v.code, 0);
  t.match(v.json, { version: /^\d+\.\d+\.\d+/, node: process.versions.node, sqlite: /^3\.\d+\.\d+$/, schema: LATEST });
  t.notOk(fs.existsSync(path.join(dir, 'gatehouse.sqlite')), 'version opens no store');
  const { exe, env, dir: cwd } = exeFolder(t);
  const packaged = await runExe(exe, ['version', '--json'], { env, cwd });
  t.equal(packaged.code, 0);
  const facts = JSON.parse(packaged.stdout);
  t.match(facts, { version: v.json.version, commit: /^[0-9a-f]{40}(-dirty)?$/, built: /^\d{4}-\d\d-\d\dT/, node: process.versions.node, schema: LATEST });
  t.equal(facts.sqlite, v.json.sqlite, 'the SQLite inside is the one the build tree has');
});

t.test('PostgreSQL: a database holding tables of its own, or a newer schema, is refused the same way', async (t) => {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  const dir = tempDir(t);
  const foreign = await freshDatabase(t);
  const c = new pg.Client({ connectionString: foreign });
  await c.connect();
  await c.query(`CREATE TABLE invoices (id serial PRIMARY KEY, total integer)`);
  await c.end();
  const r = await cli(dir, ['--db', foreign, 'stats']);
  t.equal(r.code, 6);
  t.match(r.err, /is not a Gatehouse store: it holds tables of its own \(invoices\)/);
  const newer = await freshDatabase(t);
  t.equal((await cli(dir, ['--db', newer, 'migrate'])).code, 0);
  const n = new pg.Client({ connectionString: newer });
  await n.connect();
  await n.query(`INSERT INTO knex_migrations (name, batch, migration_time) VALUES ($1, 99, now())`, [FUTURE]);
  const r2 = await cli(dir, ['--db', newer, 'user', 'list']);
  t.equal(r2.code, 6);
  t.match(r2.err, /written by a newer Gatehouse/);
  const status = await cli(dir, ['--db', newer, '--json', 'migrate', 'status']);
  t.same(status.json.unknown, [FUTURE]);
  const tables = await n.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`);
  await n.end();
  t.ok(tables.rows[0].n > 10, 'the newer store is still whole');
});
