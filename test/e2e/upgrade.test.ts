// Upgrades: a store at each earlier schema (test/fixtures/stores, made by scripts/store-fixtures.ts
// with the migrations up to that schema, data in every table it has) opens with today's code and
// migrates; every row it held is still there with the same values, and the commands read back
// every account, group, membership, client, key, passkey, app password, API key, queued delivery
// and the rest. The packaged executable signs in to the oldest and the newest of them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { exeFolder, serveExe } from '../helpers/exe';
import { tempDir } from '../helpers/server';
import { FIXTURES, manifest, query, readsEverything, storeTables, type Row } from '../helpers/store-fixtures';
import { MIGRATIONS } from '../../src/store/migrations';

const ORDER = MIGRATIONS.map(([name]) => name);

/** Every row of every table of ours (not knex's, not the full-text index's), keyed by table. */
async function snapshot(file: string): Promise<Map<string, { key: string[]; rows: Row[] }>> {
  const tables = await storeTables(file);
  const out = new Map<string, { key: string[]; rows: Row[] }>();
  for (const name of tables) {
    const cols = await query<{ name: string; pk: number }>(file, `PRAGMA table_info(\`${name}\`)`);
    const key = cols.filter((c) => c.pk > 0).map((c) => c.name);
    out.set(name, { key, rows: await query(file, `SELECT * FROM \`${name}\``) });
  }
  return out;
}

function unpack(t: Test, file: string): string {
  const dir = tempDir(t);
  fs.writeFileSync(path.join(dir, 'gatehouse.sqlite'), execFileSync('gunzip', ['-c', path.join(FIXTURES, file)]), { mode: 0o600 });
  return dir;
}

t.test('there is a fixture for every earlier schema', async (t) => {
  t.same(
    manifest.fixtures.map((f) => f.schema),
    ORDER.slice(0, -1),
    'one per migration but the last (scripts/store-fixtures.ts makes them when a migration is added)',
  );
  for (const f of manifest.fixtures)
    t.same(
      Object.keys(f.rows).filter((table) => f.rows[table] === 0),
      [],
      `${f.schema}: data in every table it has`,
    );
});

for (const fixture of manifest.fixtures) {
  t.test(`a store at ${fixture.schema} migrates and keeps everything`, async (t) => {
    const dir = unpack(t, fixture.file);
    const file = path.join(dir, 'gatehouse.sqlite');
    const before = await snapshot(file);
    const status = await cli(dir, ['--db', '', '--json', 'migrate', 'status']);
    t.equal(status.code, 0);
    t.equal(status.json.schema_version, fixture.schema);
    t.same(status.json.pending, ORDER.slice(ORDER.indexOf(fixture.schema) + 1), 'the later migrations are pending');

    const migrated = await cli(dir, ['--db', '', '--json', 'migrate']);
    t.equal(migrated.code, 0, migrated.err);
    t.equal(migrated.json.schema_version, ORDER[ORDER.length - 1]);
    const after = await snapshot(file);

    // Every row is still there, each value it had unchanged (columns added since hold new facts).
    const lost: string[] = [];
    for (const [table, { key, rows }] of before) {
      const now = after.get(table);
      if (!now) {
        lost.push(`table ${table}`);
        continue;
      }
      const id = (r: Row) => JSON.stringify((key.length > 0 ? key : Object.keys(r)).map((k) => r[k]));
      const found = new Map(now.rows.map((r) => [id(r), r]));
      for (const row of rows) {
        const same = found.get(id(row));
        if (!same) lost.push(`${table} ${id(row)}`);
        else
          for (const [col, value] of Object.entries(row))
            if (col in same && String(same[col]) !== String(value)) lost.push(`${table} ${id(row)}.${col}: ${value} -> ${same[col]}`);
      }
    }
    t.same(lost, [], 'no row lost or changed');

    await readsEverything(
      t,
      (args) => cli(dir, ['--db', '', ...args]),
      (table) => before.get(table)?.rows.length ?? null,
      (before.get('invitation')?.rows ?? [{ expires_at: Infinity }]).some((r) => Number(r.expires_at) > Date.now()),
    );
    t.equal((await cli(dir, ['--db', '', 'stats'])).code, 0);
  });
}

t.test('the packaged executable signs in to the oldest and the newest earlier store', async (t) => {
  const { exe, env, dir: cwd } = exeFolder(t);
  for (const fixture of [manifest.fixtures[0], manifest.fixtures[manifest.fixtures.length - 1]]) {
    const dir = unpack(t, fixture.file);
    const server = await serveExe(t, exe, ['--data-dir', dir, '--bcrypt-cost', '4'], { env, cwd });
    const signin = await fetch(`${server.url}/action/user_account/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: { email: 'bob@example.com', password: manifest.password } }),
    });
    t.equal(signin.status, 200, `${fixture.schema}: bob signs in with the password he had`);
    const token = ((await signin.json()) as Array<{ Attributes: { key?: string; value: string } }>).find((i) => i.Attributes.key === 'token')?.Attributes.value;
    const me = await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });
    t.equal(me.status, 200);
    t.match(await me.text(), 'bob@example.com');
    t.equal(await server.stop(), 0);
  }
});
