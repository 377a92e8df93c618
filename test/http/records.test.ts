// The record API: permissions, hidden fields, allow-lists, paging, the id/type match rule.
import { randomUUID } from 'node:crypto';
import t, { Test } from 'tap';
import { countRows, errorCode, setSignup, TEST_STORE, withAdmin } from '../helpers/server';

async function withTwoUsers(t: Test) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const alice = (await s.signup('alice@example.com')).body[1].Attributes;
  const bob = (await s.signup('bob@example.com')).body[1].Attributes;
  return { ...s, alice, bob, aliceToken: await s.signin('alice@example.com'), bobToken: await s.signin('bob@example.com') };
}

const patchBody = (type: string, id: string, attributes: Record<string, unknown>) => ({ data: { type, id, attributes }, meta: {} });

t.test('an account reads itself, not others; never sees hashes or secrets', async (t) => {
  const s = await withTwoUsers(t);
  const own = await s.call('GET', `/api/user_account/${s.alice.reference_id}`, { token: s.aliceToken });
  t.equal(own.status, 200);
  t.equal(own.body.data.id, s.alice.reference_id);
  t.equal(own.body.data.attributes.email, 'alice@example.com');
  for (const hidden of ['password', 'auth_version', 'totp_secret', 'id', 'email_key', 'user_account_id']) {
    t.notOk(Object.hasOwn(own.body.data.attributes, hidden), `${hidden} is never serialized`);
  }
  t.notMatch(own.text, /\$2[aby]\$/, 'no bcrypt hash anywhere in the body');

  const other = await s.call('GET', `/api/user_account/${s.bob.reference_id}`, { token: s.aliceToken });
  t.equal(other.status, 404, 'another account is not found, not forbidden');
  t.equal(errorCode(other), 'not_found');

  const list = await s.call('GET', '/api/user_account', { token: s.aliceToken });
  t.equal(list.status, 200);
  t.same(
    list.body.data.map((d: { id: string }) => d.id),
    [s.alice.reference_id],
    'the list holds only readable rows',
  );
  t.equal(list.body.meta.total, 1, 'and the total counts only those');

  const all = await s.call('GET', '/api/user_account', { token: s.adminToken });
  t.equal(all.body.meta.total, 3, 'administrators see every account');
  t.notMatch(all.text, /\$2[aby]\$/);
});

t.test('a normal account cannot PATCH actions, its own permission or protected fields', async (t) => {
  const s = await withTwoUsers(t);
  const list = await s.call('GET', '/api/action?filter=signup', { token: s.adminToken });
  const id = list.body.data[0].id;
  const r = await s.call('PATCH', `/api/action/${id}`, { token: s.aliceToken, body: patchBody('action', id, { permission: 0 }) });
  t.ok([403, 404].includes(r.status), `refused (${r.status})`);
  const now = await s.call('GET', `/api/action/${id}`, { token: s.adminToken });
  t.equal(now.body.data.attributes.permission, 2097057, 'unchanged');

  for (const [field, value] of Object.entries({
    permission: 2097151,
    email: 'x@example.com',
    password: 'new password 123',
    auth_version: 9,
    email_verified: true,
    disabled: false,
  })) {
    const p = await s.call('PATCH', `/api/user_account/${s.alice.reference_id}`, {
      token: s.aliceToken,
      body: patchBody('user_account', s.alice.reference_id, { name: 'Alice2', [field]: value }),
    });
    t.equal(p.status, 403, `${field}: 403`);
    t.equal(errorCode(p), 'forbidden');
  }
  const row = await s.db('user_account').where({ reference_id: s.alice.reference_id }).first();
  t.equal(row.name, 'alice', 'a refused write changes nothing, not even the allowed field');

  const rename = await s.call('PATCH', `/api/user_account/${s.alice.reference_id}`, {
    token: s.aliceToken,
    body: patchBody('user_account', s.alice.reference_id, { name: '  Alice Liddell ' }),
  });
  t.equal(rename.status, 200);
  t.equal(rename.body.data.attributes.name, 'Alice Liddell');

  const bobPatch = await s.call('PATCH', `/api/user_account/${s.bob.reference_id}`, {
    token: s.aliceToken,
    body: patchBody('user_account', s.bob.reference_id, { name: 'Mallory' }),
  });
  t.equal(bobPatch.status, 404, "another account's row does not exist for alice");
  const bobDelete = await s.call('DELETE', `/api/user_account/${s.bob.reference_id}`, { token: s.aliceToken });
  t.equal(bobDelete.status, 404);
  t.equal(await countRows(s, 'user_account'), 3);
});

t.test('PATCH: the body id and type must match the path, else 409 and nothing changes', async (t) => {
  const s = await withAdmin(t);
  const list = await s.call('GET', '/api/action?filter=signup', { token: s.adminToken });
  const id = list.body.data[0].id;
  const other = (await s.call('GET', '/api/action?filter=signin', { token: s.adminToken })).body.data[0].id;
  const wrongId = await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: patchBody('action', other, { permission: 2097057 }) });
  t.equal(wrongId.status, 409);
  const wrongType = await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: patchBody('world', id, { permission: 2097057 }) });
  t.equal(wrongType.status, 409);
  for (const bad of [-1, 2097152, 1.5, 'abc', null, true]) {
    const r = await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: patchBody('action', id, { permission: bad }) });
    t.equal(r.status, 400, `permission ${JSON.stringify(bad)}: 400`);
  }
  const digits = await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: patchBody('action', id, { permission: '2097025' }) });
  t.equal(digits.status, 200, 'a digit string is the same integer');
  const unknown = await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: patchBody('action', id, { permission: 2097057, action_name: 'x' }) });
  t.equal(unknown.status, 400, 'protected field for admins: refused whole');
  const now = await s.call('GET', `/api/action/${id}`, { token: s.adminToken });
  t.equal(now.body.data.attributes.permission, 2097025, 'nothing changed');
});

t.test('filter is a literal substring match; paging and sort are checked', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const groups = ['100% real', 'under_score', "o'brien", 'plain', 'back\\slash', '100 percent'];
  for (const name of groups) {
    const r = await s.call('POST', '/api/usergroup', { token: s.adminToken, body: { data: { type: 'usergroup', attributes: { name } } } });
    t.equal(r.status, 201, `created ${name}`);
  }
  const names = async (filter: string) => {
    const r = await s.call('GET', `/api/usergroup?filter=${encodeURIComponent(filter)}&page[size]=100`, { token: s.adminToken });
    t.equal(r.status, 200);
    return r.body.data.map((d: { attributes: { name: string } }) => d.attributes.name).sort();
  };
  t.same(await names('%'), ['100% real']);
  t.same(await names('_'), ['under_score']);
  t.same(await names("'"), ["o'brien"]);
  t.same(await names('\\'), ['back\\slash']);
  t.same(await names('!'), []);
  t.same(await names('PLAIN'), ['plain'], 'case-insensitive');

  const page = await s.call('GET', '/api/usergroup?page[size]=2&page[number]=2&sort=name', { token: s.adminToken });
  t.equal(page.status, 200);
  t.equal(page.body.data.length, 2);
  t.ok(page.body.links.prev && page.body.links.next && page.body.links.first && page.body.links.last);
  for (const q of [
    'page[size]=0',
    'page[size]=501',
    'page[size]=abc',
    'page[number]=0',
    'sort=password',
    'sort=-email_key',
    'include=x',
    'filter=a&filter=b',
  ]) {
    const r = await s.call('GET', `/api/usergroup?${q}`, { token: s.adminToken });
    t.equal(r.status, 400, `${q}: 400`);
    t.equal(errorCode(r), 'invalid_input');
  }
  t.equal((await s.call('GET', '/api/nosuchtype', { token: s.adminToken })).status, 404);
  t.equal((await s.call('GET', '/api/usergroup/not-a-uuid', { token: s.adminToken })).status, 404);
});

t.test('a filter served by the trigram index matches what a scan matches, through renames and deletes', async (t) => {
  const s = await withAdmin(t);
  const made = new Map<string, string>();
  for (const name of ['Alpha Team', 'alphabet soup', 'the "quoted" ones', 'Gamma 100%', 'beta_alpha', 'ALP', 'xyz']) {
    const r = await s.call('POST', '/api/usergroup', { token: s.adminToken, body: { data: { type: 'usergroup', attributes: { name } } } });
    t.equal(r.status, 201, `created ${name}`);
    made.set(name, r.body.data.id);
  }
  const names = async (filter: string) => {
    const r = await s.call('GET', `/api/usergroup?filter=${encodeURIComponent(filter)}&page[size]=100`, { token: s.adminToken });
    t.equal(r.status, 200, `filter ${filter}`);
    return r.body.data.map((d: { attributes: { name: string } }) => d.attributes.name).sort();
  };
  const expect = async (filter: string) => {
    const all = await s.db('usergroup').select('name');
    const want = all.map((r: { name: string }) => r.name).filter((n: string) => n.toLowerCase().includes(filter.toLowerCase()));
    t.same(await names(filter), want.sort(), `filter ${JSON.stringify(filter)} matches as a scan would`);
  };
  for (const f of ['alp', 'ALPHA', 'pha te', '"quoted"', '"quo', '100%', 'a_a', 'nothing here', 'xy', 'z']) await expect(f);

  const rename = await s.call('PATCH', `/api/usergroup/${made.get('xyz')}`, {
    token: s.adminToken,
    body: patchBody('usergroup', made.get('xyz')!, { name: 'renamed alpha' }),
  });
  t.equal(rename.status, 200);
  t.equal((await s.call('DELETE', `/api/usergroup/${made.get('Alpha Team')}`, { token: s.adminToken })).status, 204);
  for (const f of ['alpha', 'xyz', 'renamed', 'team']) await expect(f);

  if (TEST_STORE === 'sqlite') {
    // The index itself follows the table (its triggers), not only the final exact match.
    const hits = await s.db.raw(`SELECT rowid FROM usergroup_fts WHERE usergroup_fts MATCH '"alpha"'`);
    t.equal(hits.length, 3, 'alphabet soup, beta_alpha, renamed alpha');
    t.equal(await s.core.filterIndexed(), true);
  } else {
    const rows = await s.db('pg_indexes').whereIn('indexname', ['user_account_email_trgm', 'user_account_name_trgm', 'usergroup_name_trgm']);
    t.equal(rows.length, 3, 'pg_trgm indexes on PostgreSQL');
    t.equal(await s.core.filterIndexed(), true);
    // Where pg_trgm could not be created there are no such indexes: filters scan, with the same answers.
    for (const r of rows) await s.db.raw(`DROP INDEX ${r.indexname}`);
    t.equal(await s.core.filterIndexed(), false, 'serve logs filter_unindexed');
    for (const f of ['alpha', 'renamed', 'al']) await expect(f);
  }
});

t.test('totals are counted to 10,000 rows past the page: a large table gives a lower bound, no last link', async (t) => {
  const s = await withAdmin(t);
  // Accounts written straight into the store (the list reads rows; how they came is not its business).
  const now = Date.now();
  const rows = Array.from({ length: 10_150 }, (_, i) => {
    const email = `bulk${i}@example.com`;
    return { reference_id: randomUUID(), email, email_key: email, name: `Bulk ${i}`, password: 'x', permission: 0, created_at: now, updated_at: now };
  });
  await s.db.batchInsert('user_account', rows, 500);
  const all = await countRows(s, 'user_account');
  t.equal(all, 10_151);

  const first = await s.call('GET', '/api/user_account?page[size]=100', { token: s.adminToken });
  t.equal(first.status, 200);
  t.same(first.body.meta, { total: 10_100, total_exact: false, page: { size: 100, number: 1 } }, 'counted to 10,000 past the page, then stopped');
  t.notOk(first.body.links.last, 'no last page is claimed');
  t.match(first.body.links.next, /page%5Bnumber%5D=2$/);

  const deep = await s.call('GET', '/api/user_account?page[size]=500&page[number]=2', { token: s.adminToken });
  t.same(deep.body.meta, { total: all, total_exact: true, page: { size: 500, number: 2 } }, 'a count that reaches the end is exact');
  t.match(deep.body.links.last, /page%5Bnumber%5D=21$/);

  const few = await s.call('GET', '/api/user_account?filter=bulk1234', { token: s.adminToken });
  t.same(few.body.meta, { total: 1, total_exact: true, page: { size: 10, number: 1 } });
  // bulk1, bulk10…19, bulk100…199, bulk1000…1999, bulk10000…10149: 1,261 rows, under the trigram index's candidate bound.
  const some = await s.call('GET', '/api/user_account?filter=bulk1&page[size]=500&page[number]=3', { token: s.adminToken });
  t.same(some.body.meta, { total: 1261, total_exact: true, page: { size: 500, number: 3 } });
  t.equal(some.body.data.length, 261);
  // Every row matches: past the bound, the rows are read in page order instead; same answers.
  const common = await s.call('GET', '/api/user_account?filter=BULK&sort=-email', { token: s.adminToken });
  t.same(common.body.meta, { total: 10_010, total_exact: false, page: { size: 10, number: 1 } });
  t.equal(common.body.data[0].attributes.email, 'bulk9@example.com', "'@' sorts after every digit");
});

t.test('guests: list needs sign-in; rows are not found; built-in records cannot be created', async (t) => {
  const s = await withAdmin(t);
  const r = await s.call('GET', '/api/action');
  t.equal(r.status, 401);
  t.equal(errorCode(r), 'unauthenticated');
  const create = await s.call('POST', '/api/action', { token: s.adminToken, body: { data: { type: 'action', attributes: { action_name: 'x' } } } });
  t.equal(create.status, 403);
  const group = await s.call('POST', '/api/usergroup', { body: { data: { type: 'usergroup', attributes: { name: 'anon' } } } });
  t.equal(group.status, 401);
  const reserved = await s.call('POST', '/api/usergroup', {
    token: s.adminToken,
    body: { data: { type: 'usergroup', attributes: { name: 'Administrators' } } },
  });
  t.equal(reserved.status, 400, 'reserved group names are refused');
});

t.test('creating user_account through the record API obeys the signup gate', async (t) => {
  const s = await withAdmin(t);
  const body = (email: string) => ({
    data: { type: 'user_account', attributes: { email, name: 'Via API', password: 'a fine long password', passwordConfirm: 'a fine long password' } },
  });
  const closed = await s.call('POST', '/api/user_account', { body: body('api@example.com') });
  t.equal(closed.status, 403);
  t.equal(errorCode(closed), 'signup_closed');
  const byAdmin = await s.call('POST', '/api/user_account', { token: s.adminToken, body: body('api@example.com') });
  t.equal(byAdmin.status, 201, 'administrators can always create accounts');
  t.equal(byAdmin.body.data.attributes.email, 'api@example.com');
  const db = s.db;
  const acc = await db('user_account').where({ email_key: 'api@example.com' }).first();
  t.ok(await db('usergroup').where({ user_account_id: acc.id }).first(), 'with its dedicated group');
  const dup = await s.call('POST', '/api/user_account', { token: s.adminToken, body: body('API@example.com') });
  t.equal(dup.status, 409);
  const weak = await s.call('POST', '/api/user_account', {
    token: s.adminToken,
    body: { data: { type: 'user_account', attributes: { email: 'w@example.com', name: 'W', password: 'password1', passwordConfirm: 'password1' } } },
  });
  t.equal(weak.status, 400);
  t.equal(errorCode(weak), 'password_too_common');

  // Exactly signup's attributes: nothing is silently dropped (as for PATCH).
  const attempt = (extra: Record<string, unknown>, omit?: string) => {
    const attributes: Record<string, unknown> = { ...body('x@example.com').data.attributes, ...extra };
    if (omit) delete attributes[omit];
    return s.call('POST', '/api/user_account', { token: s.adminToken, body: { data: { type: 'user_account', attributes } } });
  };
  for (const extra of [{ permission: 2097151 }, { email_verified: true }, { auth_version: 9 }, { disabled: true }, { totp_secret: 'AAAA' }]) {
    const r = await attempt(extra);
    t.equal(r.status, 403, `protected: ${Object.keys(extra)[0]}`);
    t.equal(errorCode(r), 'forbidden');
  }
  for (const extra of [{ is_admin: true }, { role: 'admin' }]) {
    const r = await attempt(extra);
    t.equal(r.status, 400, `unknown: ${Object.keys(extra)[0]}`);
    t.equal(errorCode(r), 'invalid_input');
  }
  const noConfirm = await attempt({}, 'passwordConfirm');
  t.equal(noConfirm.status, 400, 'passwordConfirm is required');
  t.match(noConfirm.body.errors[0].title, /passwordConfirm/);
  t.equal(errorCode(await attempt({ passwordConfirm: 'another long password' })), 'password_mismatch');
  t.notOk(await db('user_account').where({ email_key: 'x@example.com' }).first(), 'none of them created an account');
});

t.test('the last administrator cannot be deleted or disabled (409 last_administrator)', async (t) => {
  const s = await withAdmin(t);
  const me = (await s.call('GET', '/api/user_account', { token: s.adminToken })).body.data[0].id;
  const del = await s.call('DELETE', `/api/user_account/${me}`, { token: s.adminToken });
  t.equal(del.status, 409);
  t.equal(errorCode(del), 'last_administrator');
  const d = await s.call('PATCH', `/api/user_account/${me}`, { token: s.adminToken, body: patchBody('user_account', me, { disabled: true }) });
  t.equal(d.status, 409);
  t.equal(errorCode(d), 'last_administrator');
});

t.test('an administrator deletes an account with its dedicated group', async (t) => {
  const s = await withTwoUsers(t);
  const before = await countRows(s, 'usergroup');
  const r = await s.call('DELETE', `/api/user_account/${s.bob.reference_id}`, { token: s.adminToken });
  t.equal(r.status, 204);
  t.equal(await countRows(s, 'usergroup'), before - 1);
  t.equal((await s.call('GET', '/api/action', { token: s.bobToken })).status, 401, "the deleted account's token is refused");
});
