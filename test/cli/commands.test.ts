// Every admin command in-process against a temp store: output, --json shapes and exit codes.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, startTestServer, tempDir, TEST_STORE } from '../helpers/server';

t.test('bootstrap-admin: creates, is idempotent, refuses a second administrator', async (t) => {
  const dir = tempDir(t);
  const first = await cli(dir, ['--json', 'bootstrap-admin', '--email', 'Root@Example.com', '--password-stdin'], { stdin: PASSWORD + '\n' });
  t.equal(first.code, 0, first.err);
  t.match(first.json, { outcome: 'created', account: { email: 'Root@Example.com', reference_id: String }, signup_open: false });

  const again = await cli(dir, ['--json', 'bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], { stdin: PASSWORD });
  t.equal(again.code, 0);
  t.equal(again.json.outcome, 'unchanged');

  // The operator opens signup; a re-run for the same administrator leaves it as set.
  t.equal((await cli(dir, ['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  await cli(dir, ['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], { stdin: PASSWORD });
  t.equal((await cli(dir, ['--json', 'action', 'get-permission', 'signup'])).json.permission, 2097057, 'signup stays as the operator set it');

  const other = await cli(dir, ['--json', 'bootstrap-admin', '--email', 'other@example.com', '--password-env', 'PW'], { env: { PW: 'another long password' } });
  t.equal(other.code, 3, 'another administrator exists: exit 3');
  t.match(other.err, /"code":"forbidden"/);
  t.equal(other.err.trim().split('\n').length, 1, 'one line on stderr');

  const wrongPw = await cli(dir, ['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], { stdin: 'not the password at all' });
  t.equal(wrongPw.code, 3);
});

t.test('bootstrap-admin promotes an existing account whose password matches', async (t) => {
  const s = await startTestServer(t);
  // An account that is not an administrator: made first, then the admin membership removed.
  await s.signup('user@example.com');
  const db = s.db;
  const admins = await db('usergroup').where({ system_role: 'administrators' }).first('id');
  await db('membership').where({ usergroup_id: admins.id }).del();
  await db('action').where({ action_name: 'signup' }).update({ permission: 2097057 });
  const r = await cli(s.dataDir, ['--json', 'bootstrap-admin', '--email', 'user@example.com', '--password-stdin'], { stdin: PASSWORD });
  t.equal(r.code, 0, r.err);
  t.equal(r.json.outcome, 'promoted');
  t.equal(r.json.signup_open, false, 'guest signup closed in the same transaction');
});

t.test('password rules and password sources', async (t) => {
  const dir = tempDir(t);
  const weak = await cli(dir, ['bootstrap-admin', '--email', 'a@example.com', '--password-stdin'], { stdin: 'password1' });
  t.equal(weak.code, 2, 'a common password is a usage error');
  t.match(weak.err, /too easy to guess/);
  const none = await cli(dir, ['bootstrap-admin', '--email', 'a@example.com']);
  t.equal(none.code, 2, 'no password source');
  const two = await cli(dir, ['bootstrap-admin', '--email', 'a@example.com', '--password-stdin', '--password-env', 'X'], {
    stdin: PASSWORD,
    env: { X: PASSWORD },
  });
  t.equal(two.code, 2, 'two password sources');
  const file = path.join(dir, 'pw.txt');
  fs.writeFileSync(file, PASSWORD + '\n');
  const fromFile = await cli(dir, ['bootstrap-admin', '--email', 'a@example.com', '--password-file', file]);
  t.equal(fromFile.code, 0, fromFile.err);
  t.notOk(fromFile.out.includes(PASSWORD) || fromFile.err.includes(PASSWORD), 'the password is never printed');
  const missing = await cli(dir, ['bootstrap-admin', '--email', 'a@example.com', '--password-file', path.join(dir, 'nope')]);
  t.equal(missing.code, 2);
});

t.test('action list / get-permission / set-permission', async (t) => {
  const dir = tempDir(t);
  await cli(dir, ['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], { stdin: PASSWORD });
  const list = await cli(dir, ['--json', 'action', 'list']);
  t.equal(list.code, 0);
  t.ok(list.json.actions.some((a: { action: string; permission: number }) => a.action === 'signup' && a.permission === 2097025));
  const human = await cli(dir, ['action', 'list']);
  t.match(human.out, /^TYPE\s+ACTION\s+PERMISSION\s+BITS/);

  const get = await cli(dir, ['--json', 'action', 'get-permission', 'signup']);
  t.match(get.json, { action: 'signup', on_type: 'user_account', permission: 2097025, decoded: { guest: { peek: true, execute: false } } });
  const getHuman = await cli(dir, ['action', 'get-permission', 'signup']);
  t.match(getHuman.out, /permission:\s+2097025/);
  t.match(getHuman.out, /guest: peek; owner: all; group: all/);

  const on = await cli(dir, ['--json', 'action', 'set-permission', 'signup', '--guest', 'on']);
  t.match(on.json, { before: 2097025, after: 2097057, changed: true });
  const onAgain = await cli(dir, ['--json', 'action', 'set-permission', 'signup', '--guest', 'on']);
  t.equal(onAgain.code, 0, 'no-op is success');
  t.equal(onAgain.json.changed, false);
  const off = await cli(dir, ['--json', 'action', 'set-permission', 'signup', '--guest', 'off']);
  t.match(off.json, { before: 2097057, after: 2097025 });
  const value = await cli(dir, ['--json', 'action', 'set-permission', 'user_account/signup', '--value', '2097057']);
  t.equal(value.json.after, 2097057);

  for (const bad of [
    ['--value', '2097152'],
    ['--value', '-1'],
    ['--value', '1.5'],
    ['--value', 'abc'],
    ['--guest', 'maybe'],
    [],
    ['--guest', 'on', '--value', '1'],
  ]) {
    const r = await cli(dir, ['action', 'set-permission', 'signup', ...bad]);
    t.equal(r.code, 2, `${bad.join(' ') || '(nothing)'}: usage error`);
  }
  t.equal((await cli(dir, ['--json', 'action', 'get-permission', 'signup'])).json.permission, 2097057, 'refused changes changed nothing');
  t.equal((await cli(dir, ['action', 'get-permission', 'nosuch'])).code, 4, 'unknown action: exit 4');
});

t.test('stats names the check that closes signup', async (t) => {
  const s = await startTestServer(t);
  const fresh = await cli(s.dataDir, ['--json', 'stats']);
  t.match(fresh.json, { accounts: 0, administrators: 0, groups: 2, signup: { open: true, closed_by: null }, store: { dialect: TEST_STORE, bytes: Number } });
  await s.signup('admin@example.com');
  const closed = await cli(s.dataDir, ['--json', 'stats']);
  t.match(closed.json, { accounts: 1, administrators: 1, groups: 3, unverified: 1, signup: { open: false, closed_by: 'signup_action_execute' } });
  await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'on']);
  const db = s.db;
  await db('world')
    .where({ table_name: 'usergroup' })
    .update({ permission: db.raw('permission & ~4') });
  const byTable = await cli(s.dataDir, ['--json', 'stats']);
  t.equal(byTable.json.signup.closed_by, 'usergroup_create');
  t.notOk(byTable.json.signup.open);
  const human = await cli(s.dataDir, ['stats']);
  t.match(human.out, /guest signup:\s+closed \(by usergroup_create\)/);
});

t.test('user commands', async (t) => {
  const s = await startTestServer(t);
  const dir = s.dataDir;
  await cli(dir, ['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], { stdin: PASSWORD });
  const created = await cli(dir, ['--json', 'user', 'create', '--email', 'Bob@Example.com', '--name', 'Bob', '--password-env', 'PW'], {
    env: { PW: 'bobs long password' },
  });
  t.equal(created.code, 0, created.err);
  t.match(created.json.account, { email: 'Bob@Example.com', name: 'Bob', administrator: false });
  const dup = await cli(dir, ['user', 'create', '--email', 'bob@example.com', '--password-env', 'PW'], { env: { PW: 'bobs long password' } });
  t.equal(dup.code, 3, 'duplicate email: refused by state');

  const list = await cli(dir, ['--json', 'user', 'list']);
  t.same(
    list.json.accounts.map((a: { email: string }) => a.email),
    ['root@example.com', 'Bob@Example.com'],
  );
  t.notMatch(list.out, /\$2[aby]\$/, 'no hashes');
  const show = await cli(dir, ['--json', 'user', 'show', 'BOB@example.com']);
  t.equal(show.json.name, 'Bob');
  t.equal((await cli(dir, ['user', 'show', 'nobody@example.com'])).code, 4);

  // Sessions: a token issued before set-password / revoke-sessions / disable stops working.
  const tokenOk = async (token: string) => (await s.call('GET', `/api/user_account/${show.json.reference_id}`, { token })).status;
  let token = await s.signin('bob@example.com', 'bobs long password');
  t.equal(await tokenOk(token), 200);
  t.equal((await cli(dir, ['user', 'revoke-sessions', 'bob@example.com'])).code, 0);
  t.equal(await tokenOk(token), 401, 'revoke-sessions ends the session');

  token = await s.signin('bob@example.com', 'bobs long password');
  const setPw = await cli(dir, ['user', 'set-password', 'bob@example.com', '--password-stdin'], { stdin: 'a new password for bob' });
  t.equal(setPw.code, 0, setPw.err);
  t.equal(await tokenOk(token), 401, 'set-password ends the session');
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.com', password: 'bobs long password' })).status, 401);
  token = await s.signin('bob@example.com', 'a new password for bob');
  t.equal((await cli(dir, ['user', 'set-password', 'bob@example.com', '--password-stdin'], { stdin: 'short' })).code, 2);

  const disable = await cli(dir, ['--json', 'user', 'disable', 'bob@example.com']);
  t.match(disable.json, { changed: true });
  t.equal(await tokenOk(token), 401, 'disable ends the session');
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.com', password: 'a new password for bob' })).status, 403);
  t.equal((await cli(dir, ['--json', 'user', 'disable', 'bob@example.com'])).json.changed, false, 'idempotent');
  t.equal((await cli(dir, ['user', 'disable', 'root@example.com'])).code, 3, 'the last administrator cannot be disabled');
  t.equal((await cli(dir, ['--json', 'user', 'enable', 'bob@example.com'])).json.changed, true);
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.com', password: 'a new password for bob' })).status, 200);

  // A signin clears its own address's count, not the account-wide one (CONTRACT Limits).
  t.equal((await cli(dir, ['--json', 'user', 'unlock', 'bob@example.com'])).json.changed, true, 'one failure was still counted');
  t.equal((await cli(dir, ['--json', 'user', 'unlock', 'bob@example.com'])).json.changed, false, 'nothing to unlock');
  t.equal((await cli(dir, ['--json', 'user', 'totp-reset', 'bob@example.com'])).json.changed, false, 'TOTP was not on');
});

t.test('migrate, version, usage errors', async (t) => {
  const dir = tempDir(t);
  t.equal((await cli(dir, ['--json', 'migrate', 'status'])).code, 4, 'status reads a store, and makes none');
  t.equal((await cli(dir, ['migrate'])).code, 0);
  const status = await cli(dir, ['--json', 'migrate', 'status']);
  t.equal(status.code, 0);
  t.equal(status.json.pending.length, 0);
  t.same(status.json.unknown, []);
  t.equal(status.json.schema_version, status.json.latest);
  t.equal((await cli(dir, ['migrate', 'sideways'])).code, 2);
  const version = await cli(dir, ['--version']);
  t.equal(version.code, 0);
  t.match(version.out, /^\d+\.\d+\.\d+/);
  t.equal((await cli(dir, ['no-such-command'])).code, 2);
  t.equal((await cli(dir, ['user', 'show'])).code, 2, 'missing argument');
  const aFile = path.join(dir, 'not-a-dir');
  fs.writeFileSync(aFile, 'x');
  const badDir = await cli(path.join(aFile, 'data'), ['stats']);
  t.equal(badDir.code, 5, 'unusable data directory: store unavailable');
  t.match(badDir.err, /^gatehouse: data directory .* is not usable/);
});

t.test('a busy store: bounded wait, then exit 5 with a clear message', async (t) => {
  const s = await startTestServer(t);
  const db = s.db;
  // Hold a write lock from another connection (the running server's) for longer than the CLI
  // waits: SQLite's database write lock, or PostgreSQL's lock on the action table.
  let released = false;
  await new Promise<void>((resolve, reject) => {
    db.transaction(async (trx) => {
      if (TEST_STORE === 'postgres') await trx.raw('LOCK TABLE action IN ACCESS EXCLUSIVE MODE');
      else await trx('write_lock').update({ counter: trx.raw('counter + 1') });
      resolve();
      await new Promise((r) => setTimeout(r, 2500));
      released = true;
    }).catch(reject);
  });
  const r = await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'off'], { env: { GATEHOUSE_BUSY_TIMEOUT: '500' } });
  t.equal(r.code, 5);
  t.match(r.err, /busy or unavailable/);
  t.notMatch(r.err, /SQLITE|at .*\.ts/, 'no driver text or stack trace');
  t.notOk(released, 'it answered while the lock was still held: it did not wait for the lock to go away');
});
