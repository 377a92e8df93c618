// Where people came from (contract section 24, issue 62): an account an import makes records the
// import's format as its origin; one made here (signup, the shell) has none, and keeps none when
// --overwrite brings a file's name and password to it; a second import of the same person leaves
// the first one's origin. `gatehouse stats` and GET /statistics count people by origin, every
// other figure as before. The migration goes down and up again without losing an account or a
// membership (SQLite rebuilds no table for it, so no foreign key cascades).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import bcrypt from 'bcrypt';
import { migrationSource } from '../../src/store/migrations';
import { cli } from '../helpers/cli';
import { countRows, PASSWORD, tempDir, withAdmin, type TestServer } from '../helpers/server';

const hash = bcrypt.hashSync(PASSWORD, 4);
const originOf = async (s: TestServer, email: string) => (await s.db('user_account').where({ email_key: email }).first('origin')).origin;

async function importFile(t: Parameters<typeof withAdmin>[0], s: TestServer, format: string, name: string, text: string, ...more: string[]) {
  const file = path.join(tempDir(t), name);
  fs.writeFileSync(file, text);
  const r = await cli(s.dataDir, ['--json', 'import', '--from', format, file, ...more]);
  t.equal(r.code, 0, r.err);
  return r.json;
}

t.test('an import records its format as the origin of the people it makes; stats count them', async (t) => {
  const s = await withAdmin(t);
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'local@example.com', '--password-stdin'], { stdin: 'a local password of some length' })).code, 0);

  const csv = `email,name,groups,password_hash\nann@example.com,Ann,staff,${hash}\nlocal@example.com,Local From File,staff,${hash}\n`;
  const first = await importFile(t, s, 'csv', 'people.csv', csv);
  t.match(first, { created: 1, skipped: 1 });
  t.equal(await originOf(s, 'ann@example.com'), 'csv');
  t.equal(await originOf(s, 'local@example.com'), null, 'made here: no origin');
  t.equal(await originOf(s, 'admin@example.com'), null);

  const over = await importFile(t, s, 'csv', 'people.csv', csv, '--overwrite');
  t.match(
    over.people.find((p: { email: string }) => p.email === 'local@example.com'),
    { outcome: 'updated' },
  );
  t.equal(await originOf(s, 'local@example.com'), null, '--overwrite takes the person over but not their origin');

  const yaml = `users:\n  john:\n    displayname: John\n    password: "${hash}"\n    email: john@example.com\n  ann:\n    displayname: Ann Again\n    password: "${hash}"\n    email: ann@example.com\n`;
  const authelia = await importFile(t, s, 'authelia', 'users_database.yml', yaml, '--overwrite');
  t.match(authelia, { created: 1, updated: 1 });
  t.equal(await originOf(s, 'john@example.com'), 'authelia');
  t.equal(await originOf(s, 'ann@example.com'), 'csv', 'another import of the same person keeps the first one’s origin');

  const dry = await importFile(
    t,
    s,
    'auth0',
    'users.ndjson',
    JSON.stringify({ email: 'ivy@example.com', name: 'Ivy', password_hash: hash }) + '\n',
    '--dry-run',
  );
  t.match(dry, { created: 1 });

  const stats = await cli(s.dataDir, ['--json', 'stats']);
  t.equal(stats.code, 0, stats.err);
  t.same(stats.json.by_origin, { local: 2, keycloak: 0, authelia: 1, auth0: 0, csv: 1, ldap: 0 }, 'every origin named; the dry run counted nowhere');
  t.match(
    stats.json,
    { accounts: 4, administrators: 1, groups: Number, with_totp: 0, with_passkeys: 0, without_password: 0, unverified: Number, disabled: 0, locked: 0 },
    'the other figures as before',
  );
  const human = await cli(s.dataDir, ['stats']);
  t.match(human.out, /^by origin:\s+local 2, authelia 1, csv 1$/m, 'made here always, other origins once someone came from them');

  const web = await s.call('GET', '/statistics', { token: s.adminToken });
  t.equal(web.status, 200);
  t.same(web.body.accounts.by_origin, stats.json.by_origin, 'GET /statistics counts the same');
  t.match(web.body.accounts, { total: 4, administrators: 1, with_totp: 0, locked: 0 });
});

t.test('the origin migration goes down and up again, every account and membership kept', async (t) => {
  const s = await withAdmin(t);
  await importFile(t, s, 'csv', 'people.csv', `email,groups,password_hash\nann@example.com,staff;ops,${hash}\nbob@example.com,ops,${hash}\n`);
  const counts = async () =>
    Object.fromEntries(await Promise.all(['user_account', 'membership', 'usergroup', 'audit_event'].map(async (n) => [n, await countRows(s, n)])));
  const before = await counts();
  const columns = async () => Object.keys(await s.db('user_account').columnInfo());
  t.ok((await columns()).includes('origin'));

  await s.db.migrate.down({ migrationSource, name: '20261212000000_account_origin' });
  t.notOk((await columns()).includes('origin'), 'down: the column is gone');
  t.same(await counts(), before, 'down: every account, group, membership and audit row is still there');

  await s.db.migrate.latest({ migrationSource });
  t.ok((await columns()).includes('origin'), 'up again');
  t.same(await counts(), before);
  t.equal(Number((await s.db('user_account').whereNotNull('origin').count({ n: '*' }))[0].n), 0, 'up again: nothing recorded where anyone came from');
});
