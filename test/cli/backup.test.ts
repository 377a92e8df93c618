// `gatehouse backup` and `gatehouse restore` on SQLite: a consistent snapshot while signups
// stream in, checked before it is kept; restore checks, keeps the replaced store, and refuses
// while a server runs. (The suite's PostgreSQL pass runs these on SQLite too: they are about its files.)
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { sqliteFileKnex } from '../../src/store/connection';
import { cli } from '../helpers/cli';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';

/** The CLI on the SQLite store in `dir`, whatever store the suite's pass uses. */
const sqliteCli = (dir: string, args: string[]) => cli(dir, ['--db', '', ...args]);

async function consistency(file: string) {
  const k = sqliteFileKnex(file, '', 5000);
  try {
    const accounts = await k('user_account').select('id', 'email');
    const orphans = await k('user_account as a').leftJoin('membership as m', 'm.user_account_id', 'a.id').whereNull('m.id').count({ n: '*' });
    return { accounts, orphans: Number(orphans[0].n) };
  } finally {
    await k.destroy();
  }
}

t.test('a backup taken during a stream of signups is consistent, and restores into a working store', async (t) => {
  const s = await startTestServer(t, { db: '' });
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  const out = tempDir(t);
  const file = path.join(out, 'gatehouse-backup.sqlite');

  // Signups go on, four at a time, while the backup runs.
  let done = false;
  let n = 0;
  const answered: string[] = [];
  const stream = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (!done || n < 12) {
        const email = `user${n++}@example.com`;
        if ((await s.signup(email)).status === 200) answered.push(email);
      }
    }),
  );
  while (answered.length < 6) await new Promise((r) => setTimeout(r, 20));
  const r = await sqliteCli(s.dataDir, ['--json', 'backup', '--to', file]);
  done = true;
  await stream;
  t.equal(r.code, 0, r.err);
  t.equal(r.json.integrity, 'ok');
  t.equal(r.json.file, file);
  t.ok(r.json.accounts >= 7 && r.json.accounts <= answered.length + 1, `a snapshot between start and end (${r.json.accounts} of ${answered.length + 1})`);
  t.equal(fs.statSync(file).mode & 0o777, 0o600, 'the snapshot is private');
  t.same(
    fs.readdirSync(out).filter((f) => f !== 'gatehouse-backup.sqlite'),
    [],
    'no partial file left',
  );
  const c = await consistency(file);
  t.equal(c.accounts.length, r.json.accounts);
  t.equal(c.orphans, 0, 'every account in the snapshot has its membership (no half-written signup)');

  // An existing file is kept unless --force.
  const again = await sqliteCli(s.dataDir, ['backup', '--to', file]);
  t.equal(again.code, 3);
  t.match(again.err, /^gatehouse: .*gatehouse-backup\.sqlite exists; give --force to replace it\n$/);
  t.equal((await sqliteCli(s.dataDir, ['backup', '--to', file, '--force'])).code, 0);
  t.equal((await consistency(file)).accounts.length, answered.length + 1, 'the forced backup has every account');

  // Restore into a new folder and serve from it: the same accounts sign in.
  const restored = tempDir(t);
  const back = await sqliteCli(restored, ['--json', 'restore', '--from', file]);
  t.equal(back.code, 0, back.err);
  t.same(
    { accounts: back.json.accounts, previous: back.json.previous, integrity: back.json.integrity },
    { accounts: answered.length + 1, previous: null, integrity: 'ok' },
  );
  const p = await startTestServer(t, { db: '' }, restored);
  t.equal((await p.action('user_account', 'signin', { email: answered[0], password: PASSWORD })).status, 200);
  t.equal((await p.action('user_account', 'signin', { email: 'admin@example.com', password: PASSWORD })).status, 200);
});

t.test('restore keeps the store it replaces; bad snapshots and a running server are refused', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = path.join(dir, 'data');
  const snap = path.join(dir, 'snap.sqlite');
  const run = (args: string[]) => runExe(exe, ['--data-dir', data, ...args], { env, cwd: dir });

  const server = await serveExe(t, exe, ['--data-dir', data, '--bcrypt-cost', '4'], { env, cwd: dir });
  const signup = await fetch(`${server.url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'first@example.com', name: 'First', password: PASSWORD, passwordConfirm: PASSWORD } }),
  });
  t.equal(signup.status, 200);
  t.equal((await run(['backup', '--to', snap])).code, 0, 'backup while the server runs');

  const busy = await run(['restore', '--from', snap]);
  t.equal(busy.code, 3, 'restore while a server runs on the store');
  t.match(busy.stderr, /^gatehouse: a server \(pid \d+\) is running on .*; stop it first\n$/);
  t.equal(await server.stop(), 0);
  t.notOk(fs.existsSync(path.join(data, 'gatehouse.pid')), 'the server removed its pid file');

  // A later account, then restore: it is gone from the store and kept in the previous file.
  const later = await runExe(exe, ['--data-dir', data, 'user', 'create', '--email', 'later@example.com', '--password-stdin'], {
    env,
    cwd: dir,
    stdin: PASSWORD,
  });
  t.equal(later.code, 0, later.stderr);
  const r = await run(['--json', 'restore', '--from', snap]);
  t.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  t.equal(report.accounts, 1);
  t.match(report.previous, /gatehouse\.sqlite\.before-restore-\d{4}-/);
  t.equal((await run(['user', 'show', 'later@example.com'])).code, 4, 'the restored store has no later account');
  t.equal((await consistency(report.previous)).accounts.length, 2, 'the previous store is kept whole (its WAL folded in)');
  t.same(
    fs.readdirSync(data).filter((f) => f.startsWith('.')),
    [],
    'no temporary file left',
  );

  // Bad snapshots: missing, not SQLite, not Gatehouse, from a newer release.
  t.equal((await run(['restore', '--from', path.join(dir, 'missing.sqlite')])).code, 4);
  fs.writeFileSync(path.join(dir, 'junk.sqlite'), 'this is not a database');
  const junk = await run(['restore', '--from', path.join(dir, 'junk.sqlite')]);
  t.equal(junk.code, 2);
  t.match(junk.stderr, /is not a SQLite database/);
  const other = path.join(dir, 'other.sqlite');
  const k = sqliteFileKnex(other, '', 5000);
  await k.schema.createTable('notes', (tb) => tb.increments('id'));
  await k.destroy();
  t.match((await run(['restore', '--from', other])).stderr, /is not a Gatehouse store/);
  const newer = path.join(dir, 'newer.sqlite');
  fs.copyFileSync(snap, newer);
  const kn = sqliteFileKnex(newer, '', 5000);
  await kn('knex_migrations').insert({ name: '29990101000000_from_the_future', batch: 9, migration_time: new Date() });
  await kn.destroy();
  const future = await run(['restore', '--from', newer]);
  t.equal(future.code, 2);
  t.match(future.stderr, /written by a newer Gatehouse/);
  t.equal((await run(['user', 'show', 'first@example.com'])).code, 0, 'refused restores left the store as it was');
});

t.test('on PostgreSQL, backup and restore point to pg_dump and pg_restore (exit 2)', async (t) => {
  const dir = tempDir(t);
  const b = await cli(dir, ['--db', 'postgres://127.0.0.1:1/none', 'backup', '--to', path.join(dir, 'x')]);
  t.equal(b.code, 2);
  t.match(b.err, /pg_dump/);
  const r = await cli(dir, ['--db', 'postgres://127.0.0.1:1/none', 'restore', '--from', path.join(dir, 'x')]);
  t.equal(r.code, 2);
  t.match(r.err, /pg_restore/);
});

t.test('backup names its schema version as stats does (the newest migration), not a count', async (t) => {
  const data = tempDir(t);
  await startTestServer(t, { db: '' }, data);
  const file = path.join(tempDir(t), 'snap.sqlite');
  const r = await sqliteCli(data, ['--json', 'backup', '--to', file]);
  t.equal(r.code, 0, r.err);
  const stats = await sqliteCli(data, ['--json', 'stats']);
  t.equal(r.json.schema_version, stats.json.store.schema_version);
  t.match(r.json.schema_version, /^\d{14}_/);
});
