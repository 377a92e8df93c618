// Signup: validation on every field, duplicates, concurrency and all-or-nothing writes.
import t from 'tap';
import { countRows, errorCode, PASSWORD, setSignup, startTestServer, TEST_STORE } from '../helpers/server';

const attrs = (over: Record<string, unknown> = {}) => ({ email: 'new@example.com', name: 'New', password: PASSWORD, passwordConfirm: PASSWORD, ...over });

t.test('malformed signup input is rejected with a stable code and nothing is written', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['missing email', attrs({ email: undefined }), 400, 'invalid_input'],
    ['email not a string', attrs({ email: 42 }), 400, 'invalid_input'],
    ['no @', attrs({ email: 'new.example.com' }), 400, 'invalid_input'],
    ['two @', attrs({ email: 'a@b@example.com' }), 400, 'invalid_input'],
    ['space inside', attrs({ email: 'a b@example.com' }), 400, 'invalid_input'],
    ['control char', attrs({ email: 'a\u0000b@example.com' }), 400, 'invalid_input'],
    ['too long email', attrs({ email: 'a'.repeat(250) + '@x.io' }), 400, 'invalid_input'],
    ['empty name', attrs({ name: '   ' }), 400, 'invalid_input'],
    ['long name', attrs({ name: 'n'.repeat(101) }), 400, 'invalid_input'],
    ['name with newline', attrs({ name: 'a\nb' }), 400, 'invalid_input'],
    ['mismatch', attrs({ passwordConfirm: PASSWORD + 'x' }), 400, 'password_mismatch'],
    ['missing confirm', attrs({ passwordConfirm: undefined }), 400, 'invalid_input'],
    ['short', attrs({ password: 'short', passwordConfirm: 'short' }), 400, 'password_too_short'],
    ['73 bytes', attrs({ password: 'é'.repeat(36) + 'a', passwordConfirm: 'é'.repeat(36) + 'a' }), 400, 'password_too_long'],
    ['common', attrs({ password: 'Password123', passwordConfirm: 'Password123' }), 400, 'password_too_common'],
    [
      'equals email',
      attrs({ email: 'longname@example.com', password: 'LongName@example.com', passwordConfirm: 'LongName@example.com' }),
      400,
      'password_too_common',
    ],
  ];
  for (const [name, a, status, code] of cases) {
    const r = await s.action('user_account', 'signup', a);
    t.equal(r.status, status, `${name}: ${status}`);
    t.equal(errorCode(r), code, `${name}: ${code}`);
    t.equal(r.body[0].Attributes.type, 'error');
  }
  t.equal(await countRows(s, 'user_account'), 0);
  t.equal(await countRows(s, 'membership'), 0);

  const TWO_BYTE_36 = 'ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãä';
  t.equal(Buffer.byteLength(TWO_BYTE_36), 72);
  // 72 bytes exactly is fine (multi-byte characters count as bytes, not characters).
  const ok = await s.action('user_account', 'signup', attrs({ password: TWO_BYTE_36, passwordConfirm: TWO_BYTE_36 }));
  t.equal(ok.status, 200);
});

t.test('duplicate email is rejected ignoring case and surrounding space', async (t) => {
  const s = await startTestServer(t);
  t.equal((await s.signup('Mike@Example.com')).status, 200);
  // Signup is closed after the first account; sign in as admin and open it.
  const admin = await s.signin('mike@example.com');
  await setSignup(s, admin, 2097057);
  for (const email of ['mike@example.com', 'MIKE@EXAMPLE.COM', '  mike@example.com  ']) {
    const r = await s.signup(email);
    t.equal(r.status, 409, email);
    t.equal(errorCode(r), 'email_taken');
  }
  t.equal(await countRows(s, 'user_account'), 1);
});

t.test('extra attributes are ignored and never stored', async (t) => {
  const s = await startTestServer(t);
  const r = await s.action('user_account', 'signup', attrs({ permission: 2097151, auth_version: 99, email_verified: true, __proto__: { polluted: true } }));
  t.equal(r.status, 200);
  const row = await s.db('user_account').first();
  t.not(row.permission, 2097151);
  t.equal(Number(row.auth_version), 1);
  t.notOk(row.email_verified);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('25 concurrent signups with one email: exactly one account, group and membership', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  const replies = await Promise.all(Array.from({ length: 25 }, () => s.signup('race@example.com')));
  const statuses = replies.map((r) => r.status).sort();
  t.equal(statuses.filter((c) => c === 200).length, 1, 'one wins');
  t.equal(statuses.filter((c) => c === 409).length, 24, 'the rest get 409, never a 500');
  t.equal(await countRows(s, 'user_account'), 2, 'the administrator and one racer');
  const db = s.db;
  const acc = await db('user_account').where({ email_key: 'race@example.com' }).first();
  t.equal(
    await db('usergroup')
      .where({ user_account_id: acc.id })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    1,
    'one dedicated group',
  );
  const memberships = await db('membership').where({ account_id: acc.id });
  t.equal(memberships.length, 2, 'its dedicated group and users');
});

t.test('25 concurrent first signups with different emails: exactly one administrator', async (t) => {
  const s = await startTestServer(t);
  const replies = await Promise.all(Array.from({ length: 25 }, (_, i) => s.signup(`first${i}@example.com`)));
  t.equal(replies.filter((r) => r.status === 200).length, 1, 'only the first gets in: signup closes with it');
  t.ok(
    replies.every((r) => r.status === 200 || (r.status === 403 && errorCode(r) === 'signup_closed')),
    JSON.stringify(replies.filter((r) => r.status !== 200 && errorCode(r) !== 'signup_closed').map((r) => [r.status, r.body])),
  );
  const stats = await s
    .db('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where('g.system_role', 'administrators')
    .count({ n: '*' })
    .first();
  t.equal(Number(stats?.n), 1);
});

t.test('a failure between the writes of signup leaves no row', async (t) => {
  const s = await startTestServer(t);
  const db = s.db;
  // A real failure inside the store: a trigger makes an insert fail.
  const failOn = async (name: string, table: string) => {
    if (TEST_STORE === 'postgres') {
      await db.raw(`CREATE OR REPLACE FUNCTION gh_injected_failure() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$ LANGUAGE plpgsql`);
      await db.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION gh_injected_failure()`);
    } else await db.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
  };
  const drop = (name: string, table: string) => db.raw(TEST_STORE === 'postgres' ? `DROP TRIGGER ${name} ON ${table}` : `DROP TRIGGER ${name}`);
  // Step 5 (the group insert) fails.
  await failOn('fail_group', 'usergroup');
  const r = await s.signup('broken@example.com');
  t.equal(r.status, 500);
  t.equal(errorCode(r), 'internal');
  t.notMatch(r.text, /injected|SQLITE|INSERT|trigger/i, 'no driver text reaches the client');
  t.equal(await countRows(s, 'user_account'), 0, 'the account insert was rolled back');
  await drop('fail_group', 'usergroup');

  // Same at step 6 (membership).
  await failOn('fail_membership', 'membership');
  t.equal((await s.signup('broken@example.com')).status, 500);
  t.equal(await countRows(s, 'user_account'), 0);
  t.equal(await countRows(s, 'usergroup'), 2, 'only the two system groups');
  const signup = await db('action').where({ action_name: 'signup' }).first();
  t.equal(signup.permission, 2097057, 'the bootstrap close was rolled back too');
  await drop('fail_membership', 'membership');

  t.equal((await s.signup('broken@example.com')).status, 200, 'healthy again');
});

t.test('signup refused when a table bit of the chain is removed, whatever the action says', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  const worlds = await s.call('GET', '/api/world?filter=usergroup', { token: admin });
  const w = worlds.body.data.find((d: { attributes: { table_name: string } }) => d.attributes.table_name === 'usergroup');
  const without = w.attributes.permission & ~4;
  const p = await s.call('PATCH', `/api/world/${w.id}`, {
    token: admin,
    body: { data: { type: 'world', id: w.id, attributes: { permission: without } }, meta: {} },
  });
  t.equal(p.status, 200);
  const before = await countRows(s, 'user_account');
  const r = await s.signup('late@example.com');
  t.equal(r.status, 403);
  t.match(r.body[0].Attributes.message, /usergroup/);
  t.equal(await countRows(s, 'user_account'), before, 'the account insert of step 3 was rolled back');
});
