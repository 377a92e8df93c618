// Groups make the group third of every permission integer real: members over the record API,
// rows shared with groups, and every change seen on the very next request, by every instance.
import t from 'tap';
import { encode, OPERATIONS } from '../../src/permission/bits';
import { errorCode, setSignup, startTestServer, withAdmin, type TestServer } from '../helpers/server';

type Server = TestServer & { adminToken: string };

/** An administrator, open signup, and alice, bob, carol and dave signed in. */
async function withPeople(t: Parameters<typeof withAdmin>[0]) {
  const s = (await withAdmin(t)) as Server;
  await setSignup(s, s.adminToken, 2097057);
  const people: Record<string, { id: string; token: string }> = {};
  for (const name of ['alice', 'bob', 'carol', 'dave']) {
    const r = await s.signup(`${name}@example.com`);
    people[name] = { id: r.body[1].Attributes.reference_id, token: await s.signin(`${name}@example.com`) };
  }
  const admin = { id: (await s.call('GET', '/api/me', { token: s.adminToken })).body.data.id as string, token: s.adminToken };
  return { ...s, people, admin };
}

const linkage = (type: string, ...ids: string[]) => ({ data: ids.map((id) => ({ type, id })) });

async function createGroup(s: TestServer, token: string, name: string, permission?: number): Promise<string> {
  const r = await s.call('POST', '/api/usergroup', {
    token,
    body: { data: { type: 'usergroup', attributes: { name, ...(permission === undefined ? {} : { permission }) } } },
  });
  if (r.status !== 201) throw new Error(`group create: ${r.status} ${r.text}`);
  return r.body.data.id;
}

const members = (s: TestServer, group: string, token?: string) => s.call('GET', `/api/usergroup/${group}/relationships/members`, { token });
const addMembers = (s: TestServer, group: string, token: string | undefined, ...ids: string[]) =>
  s.call('POST', `/api/usergroup/${group}/relationships/members`, { token, body: linkage('user_account', ...ids) });
const removeMembers = (s: TestServer, group: string, token: string | undefined, ...ids: string[]) =>
  s.call('DELETE', `/api/usergroup/${group}/relationships/members`, { token, body: linkage('user_account', ...ids) });
const share = (s: TestServer, method: 'POST' | 'DELETE', type: string, id: string, token: string, ...groups: string[]) =>
  s.call(method, `/api/${type}/${id}/relationships/usergroups`, { token, body: linkage('usergroup', ...groups) });
const rename = (s: TestServer, id: string, token: string, name: string) =>
  s.call('PATCH', `/api/usergroup/${id}`, { token, body: { data: { type: 'usergroup', id, attributes: { name } } } });

t.test('a member gains exactly the group bits of a shared row; removal counts on the next request, on every instance', async (t) => {
  const s = await withPeople(t);
  // A second server on the same store: no per-process cache may keep a removed member in.
  const other = await startTestServer(t, {}, s.dataDir);
  const { alice, bob, carol } = s.people;
  const team = await createGroup(s, alice.token, 'team');
  // docs: the owner may do everything; its groups' members may only peek and read.
  const docs = await createGroup(s, alice.token, 'docs', encode({ owner: OPERATIONS, group: ['peek', 'read'] }));
  t.equal((await share(s, 'POST', 'usergroup', docs, alice.token, team)).status, 204, 'alice shares docs with team');
  t.same((await s.call('GET', `/api/usergroup/${docs}/relationships/usergroups`, { token: alice.token })).body.data, [{ type: 'usergroup', id: team }]);

  t.equal((await s.call('GET', `/api/usergroup/${docs}`, { token: bob.token })).status, 404, 'not a member yet: 404');
  t.equal((await s.call('GET', '/api/usergroup?filter=docs', { token: bob.token })).body.data.length, 0, 'and not in his list');
  t.equal((await addMembers(s, team, alice.token, bob.id)).status, 204, 'alice adds bob to team');
  t.same((await members(s, team, alice.token)).body.data, [{ type: 'user_account', id: bob.id }]);

  for (const server of [s, other]) {
    t.equal((await server.call('GET', `/api/usergroup/${docs}`, { token: bob.token })).status, 200, 'a member reads the shared row at once');
    const listed = await server.call('GET', '/api/usergroup?filter=docs', { token: bob.token });
    t.same(
      listed.body.data.map((d: { id: string }) => d.id),
      [docs],
      'and the list returns it to him',
    );
  }
  t.equal((await rename(s, docs, bob.token, 'mine')).status, 403, 'group bits without update: no change');
  t.equal((await s.call('DELETE', `/api/usergroup/${docs}`, { token: bob.token })).status, 403, 'nor delete');
  t.equal((await s.call('GET', `/api/usergroup/${docs}`, { token: carol.token })).status, 404, 'a non-member gets 404');
  t.equal((await s.call('GET', '/api/usergroup?filter=docs', { token: carol.token })).body.data.length, 0, 'and an empty list');

  // The bits are what count: give the group update, and bob may rename; take it back, and not.
  const patchPermission = (permission: number) =>
    s.call('PATCH', `/api/usergroup/${docs}`, { token: alice.token, body: { data: { type: 'usergroup', id: docs, attributes: { permission } } } });
  t.equal((await patchPermission(encode({ owner: OPERATIONS, group: ['peek', 'read', 'update'] }))).status, 200);
  t.equal((await rename(s, docs, bob.token, 'docs2')).status, 200, 'with group update, a member renames');
  t.equal((await patchPermission(encode({ owner: OPERATIONS, group: ['peek', 'read'] }))).status, 200);
  t.equal((await rename(s, docs, bob.token, 'docs3')).status, 403);

  // Removal on one instance is seen by the other on its very next request.
  t.equal((await removeMembers(other, team, alice.token, bob.id)).status, 204, 'removed through the other instance');
  t.equal((await s.call('GET', `/api/usergroup/${docs}`, { token: bob.token })).status, 404, 'gone at once on the first instance');
  t.equal((await other.call('GET', `/api/usergroup/${docs}`, { token: bob.token })).status, 404, 'and on the second');
  // Lists start with the principal the token had at its previous request: a changed one is never reused.
  for (const server of [s, other]) {
    t.equal((await server.call('GET', '/api/usergroup?filter=docs', { token: bob.token })).body.data.length, 0, 'and his lists no longer return it');
  }

  // Taking the share back needs update on the row only.
  t.equal((await share(s, 'DELETE', 'usergroup', docs, alice.token, team)).status, 204);
  t.same((await s.call('GET', `/api/usergroup/${docs}/relationships/usergroups`, { token: alice.token })).body.data, []);
  const events = (await s.db('audit_event').select('event')).map((r: { event: string }) => r.event);
  for (const e of ['group_created', 'record_shared', 'group_member_added', 'group_member_removed', 'record_unshared']) t.ok(events.includes(e), `${e} audited`);
});

t.test('who may change or list a group’s members: table-driven', async (t) => {
  const s = await withPeople(t);
  const { alice, bob, carol, dave } = s.people;
  const team = await createGroup(s, alice.token, 'team');
  t.equal((await addMembers(s, team, alice.token, bob.id)).status, 204);
  const cases: Array<{ who: string; token: string | undefined; list: number; change: number }> = [
    { who: 'the owner of the group', token: alice.token, list: 200, change: 204 },
    { who: 'a member (group bits: peek, read)', token: bob.token, list: 200, change: 403 },
    { who: 'a non-member', token: dave.token, list: 404, change: 404 },
    { who: 'an administrator', token: s.admin.token, list: 200, change: 204 },
    { who: 'a guest', token: undefined, list: 404, change: 404 },
  ];
  for (const c of cases) {
    t.equal((await members(s, team, c.token)).status, c.list, `${c.who}: list ${c.list}`);
    const added = await addMembers(s, team, c.token, carol.id);
    t.equal(added.status, c.change, `${c.who}: add ${c.change}`);
    const removed = await removeMembers(s, team, c.token, carol.id);
    t.equal(removed.status, c.change, `${c.who}: remove ${c.change}`);
    t.same(
      (await members(s, team, alice.token)).body.data.map((d: { id: string }) => d.id),
      [bob.id],
      `${c.who}: membership as before`,
    );
  }
  // Adding twice and removing a non-member change nothing and are not errors (JSON:API).
  t.equal((await addMembers(s, team, alice.token, bob.id, bob.id)).status, 204);
  t.equal((await removeMembers(s, team, alice.token, carol.id)).status, 204);
  t.equal((await members(s, team, alice.token)).body.data.length, 1);
});

t.test('sharing: update on the row, and membership of or refer on the group', async (t) => {
  const s = await withPeople(t);
  const { alice, bob, carol } = s.people;
  const team = await createGroup(s, alice.token, 'team');
  await addMembers(s, team, alice.token, bob.id);
  const bobs = await createGroup(s, bob.token, 'bobs');
  const carols = await createGroup(s, carol.token, 'carols');
  t.equal((await share(s, 'POST', 'usergroup', bobs, bob.token, team)).status, 204, 'a member shares his row with his group');
  t.equal((await share(s, 'POST', 'usergroup', carols, carol.token, team)).status, 404, 'a stranger cannot name a group she cannot see');
  t.equal((await share(s, 'POST', 'usergroup', bobs, carol.token, team)).status, 404, 'nor share a row she cannot read');
  t.equal((await share(s, 'POST', 'usergroup', team, bob.token, bobs)).status, 403, 'a member without update on the row: 403');
  t.equal((await share(s, 'POST', 'usergroup', bobs, bob.token, '00000000-0000-4000-8000-000000000000')).status, 404, 'an unknown group: 404');
  t.equal((await share(s, 'POST', 'nosuch', bobs, bob.token, team)).status, 404, 'an unknown type: 404');
  t.equal((await s.call('GET', `/api/usergroup/${bobs}/relationships/usergroups`, { token: carol.token })).status, 404, 'shares of an unreadable row: 404');
  // A share outlives its sharer's membership, and he may still take it back.
  await removeMembers(s, team, alice.token, bob.id);
  t.equal((await share(s, 'DELETE', 'usergroup', bobs, bob.token, team)).status, 204);
  t.same((await s.call('GET', `/api/usergroup/${bobs}/relationships/usergroups`, { token: bob.token })).body.data, []);
  // Accounts are rows too: an account shared with a group is read by its members only if its
  // group bits say so (an account's default permission has none).
  t.equal((await share(s, 'POST', 'user_account', carol.id, carol.token, carols)).status, 204);
  t.equal((await s.call('GET', `/api/user_account/${carol.id}`, { token: bob.token })).status, 404);
});

t.test('administrators through the members endpoint; users is not changed by hand', async (t) => {
  const s = await withPeople(t);
  const { alice, bob } = s.people;
  const system = (await s.call('GET', '/api/usergroup?sort=name&page[size]=100', { token: s.admin.token })).body.data;
  const admins = system.find((g: { attributes: { system_role: string } }) => g.attributes.system_role === 'administrators').id;
  const users = system.find((g: { attributes: { system_role: string } }) => g.attributes.system_role === 'users').id;

  t.equal((await addMembers(s, admins, alice.token, alice.id)).status, 404, 'a non-administrator cannot even see administrators');
  t.equal((await addMembers(s, admins, s.admin.token, bob.id)).status, 204, 'an administrator adds bob');
  t.equal((await s.call('GET', '/api/me', { token: bob.token })).body.meta.administrator, true, 'bob administers on his next request');
  const signupOwner = await s.db('action').where({ action_name: 'signup' }).first('user_account_id');
  t.ok(Number(signupOwner.user_account_id) > 0, 'the signup action keeps an administrator owner');

  // Both administer; either may remove the other, never the last one.
  t.equal((await removeMembers(s, admins, bob.token, s.admin.id)).status, 204, 'bob removes the first administrator');
  t.equal((await s.call('GET', '/api/me', { token: s.admin.token })).body.meta.administrator, false);
  const last = await removeMembers(s, admins, bob.token, bob.id);
  t.equal(last.status, 409);
  t.equal(errorCode(last), 'last_administrator');
  t.equal((await s.call('GET', '/api/me', { token: bob.token })).body.meta.administrator, true, 'still an administrator');

  const usersChange = await removeMembers(s, users, bob.token, alice.id);
  t.equal(usersChange.status, 403, 'users holds every account');
  t.equal(errorCode(usersChange), 'forbidden');
  t.equal((await rename(s, admins, bob.token, 'admins')).status, 403, 'system groups keep their names');
});

t.test('bad linkage gets a 400 naming the problem; nothing changes', async (t) => {
  const s = await withPeople(t);
  const { alice, bob } = s.people;
  const team = await createGroup(s, alice.token, 'team');
  const url = `/api/usergroup/${team}/relationships/members`;
  const bad: Array<[string, unknown, number]> = [
    ['no data', {}, 400],
    ['data not an array', { data: { type: 'user_account', id: bob.id } }, 400],
    ['an item not an object', { data: ['x'] }, 400],
    ['a wrong type', { data: [{ type: 'usergroup', id: bob.id }] }, 400],
    ['no id', { data: [{ type: 'user_account' }] }, 400],
    ['a numeric id', { data: [{ type: 'user_account', id: 7 }] }, 400],
    ['too many items', { data: Array.from({ length: 101 }, () => ({ type: 'user_account', id: bob.id })) }, 400],
    ['an id that names no account', { data: [{ type: 'user_account', id: 'not-a-uuid' }] }, 404],
    ['an unknown account among known ones', linkage('user_account', bob.id, '00000000-0000-4000-8000-000000000000'), 404],
  ];
  for (const [what, body, status] of bad) {
    const r = await s.call('POST', url, { token: alice.token, body });
    t.equal(r.status, status, what);
    t.ok(r.body.errors?.[0]?.title, `${what}: says why`);
  }
  t.same((await members(s, team, alice.token)).body.data, [], 'nobody was added, not even bob from the mixed request');
  t.equal((await s.call('POST', url, { token: alice.token, raw: 'a=b', contentType: 'application/x-www-form-urlencoded' })).status, 415);
  t.equal((await s.call('PATCH', url, { token: alice.token, body: linkage('user_account', bob.id) })).status, 405, 'replacing all members is not offered');
  t.equal((await members(s, 'not-a-uuid', alice.token)).status, 404);
  t.equal((await s.call('GET', `/api/usergroup/${team}/relationships/nosuch`, { token: alice.token })).status, 404);
});
