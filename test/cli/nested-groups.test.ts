// Groups inside groups from the shell and the record API: `group add-group` / `remove-group`, the
// rules (no cycle, at most ten deep, nothing inside administrators, users inside nothing, no
// account's own group inside a managed one), and membership through nesting in every decision:
// the permission's group third, records shared with a group, an app's gate, on the next request.
import t from 'tap';
import { encode } from '../../src/permission/bits';
import { cli } from '../helpers/cli';
import { errorCode, setSignup, withAdmin } from '../helpers/server';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const ids: Record<string, string> = {};
  for (const name of ['alice', 'bob']) ids[name] = (await s.signup(`${name}@example.com`)).body[1].Attributes.reference_id;
  const groups: Record<string, string> = {};
  for (const name of ['staff', 'engineering', 'platform', 'oncall']) {
    const made = await cli(s.dataDir, ['--json', 'group', 'create', name]);
    groups[name] = made.json.reference_id;
  }
  return { ...s, ids, groups, aliceToken: await s.signin('alice@example.com') };
}

t.test('add-group and remove-group: nesting shown both ways, idempotent, audited', async (t) => {
  const s = await setUp(t);
  const added = await cli(s.dataDir, ['--json', 'group', 'add-group', 'staff', 'engineering']);
  t.equal(added.code, 0, added.err);
  t.same(added.json, {
    group: { reference_id: s.groups.staff, name: 'staff' },
    child: { reference_id: s.groups.engineering, name: 'engineering' },
    changed: true,
  });
  const again = await cli(s.dataDir, ['group', 'add-group', 'STAFF', 'engineering']);
  t.equal(again.code, 0);
  t.match(again.out, /engineering: already inside staff; nothing changed/);

  const staff = await cli(s.dataDir, ['--json', 'group', 'show', 'staff']);
  t.same(staff.json.groups, [{ reference_id: s.groups.engineering, name: 'engineering' }]);
  t.same(staff.json.member_of, []);
  const engineering = await cli(s.dataDir, ['group', 'show', 'engineering']);
  t.match(engineering.out, /inside of:\s+staff/);

  const removed = await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering']);
  t.equal(removed.code, 0, removed.err);
  t.match(removed.out, /engineering: taken out of staff/);
  t.match((await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering'])).out, /not inside staff; nothing changed/);

  const audit = await cli(s.dataDir, ['--json', 'audit']);
  t.equal(audit.code, 0, audit.err);
  const rows = JSON.stringify(audit.json);
  t.equal(rows.match(/"group_nested"/g)?.length, 1, 'one audit row for the one change');
  t.equal(rows.match(/"group_unnested"/g)?.length, 1);
  t.match(rows, new RegExp(s.groups.engineering));
});

t.test('refused: a cycle, a chain past ten, inside administrators, users inside anything, an own group inside a managed one', async (t) => {
  const s = await setUp(t);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'staff', 'engineering'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'engineering', 'platform'])).code, 0);

  const cycle = await cli(s.dataDir, ['group', 'add-group', 'platform', 'staff']);
  t.equal(cycle.code, 3, 'a cycle is refused by the state of the groups');
  t.match(cycle.err, /a cycle: platform is already inside staff/);
  const self = await cli(s.dataDir, ['group', 'add-group', 'staff', 'staff']);
  t.equal(self.code, 3);
  t.match(self.err, /cannot be inside itself/);
  t.same((await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.member_of, [], 'nothing changed');

  // A chain of eleven groups is ten nestings deep: the eleventh nesting is refused, from either end.
  const chain = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10', 'c11'];
  for (const name of chain) t.equal((await cli(s.dataDir, ['group', 'create', name])).code, 0);
  for (let i = 0; i < 9; i++) t.equal((await cli(s.dataDir, ['group', 'add-group', chain[i], chain[i + 1]])).code, 0, `${chain[i]} ⊃ ${chain[i + 1]}`);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'c9', 'c10'])).code, 0, 'ten nestings');
  const deep = await cli(s.dataDir, ['group', 'add-group', 'c10', 'c11']);
  t.equal(deep.code, 3);
  t.match(deep.err, /a chain of 11 nested groups; at most 10 are allowed/);
  const above = await cli(s.dataDir, ['group', 'add-group', 'c11', 'c0']);
  t.equal(above.code, 3, 'the same chain grown from its top');

  const admins = await cli(s.dataDir, ['group', 'add-group', 'administrators', 'staff']);
  t.equal(admins.code, 3);
  t.match(admins.err, /no group goes inside administrators: it holds named people only/);
  const users = await cli(s.dataDir, ['group', 'add-group', 'staff', 'users']);
  t.equal(users.code, 3);
  t.match(users.err, /the users group goes inside no group: it holds every account/);
  const intoUsers = await cli(s.dataDir, ['group', 'add-group', 'users', 'staff']);
  t.equal(intoUsers.code, 3);
  // Administrators may sit inside another group (they are its members then).
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'staff', 'administrators'])).code, 0);

  // Alice's own group (any account can make one): never inside a managed group.
  const own = await s.call('POST', '/api/usergroup', { token: s.aliceToken, body: { data: { type: 'usergroup', attributes: { name: 'friends' } } } });
  t.equal(own.status, 201, own.text);
  const sneaked = await cli(s.dataDir, ['group', 'add-group', 'staff', own.body.data.id]);
  t.equal(sneaked.code, 3);
  t.match(sneaked.err, /only managed groups go inside staff: friends is an account's own group/);

  t.equal((await cli(s.dataDir, ['group', 'add-group', 'nosuch', 'staff'])).code, 4);
});

t.test('membership through nesting decides: shared records, the group third, app gates; a change shows at the next request', async (t) => {
  const s = await setUp(t);
  // A record shared with staff, readable by staff's members through the group third.
  const made = await cli(s.dataDir, ['--json', 'group', 'create', 'handbook', '--permission', String(encode({ group: ['peek', 'read'] }))]);
  t.equal(made.code, 0, made.err);
  const handbook = made.json.reference_id as string;
  const share = await s.call('POST', `/api/usergroup/${handbook}/relationships/usergroups`, {
    token: s.adminToken,
    body: { data: [{ type: 'usergroup', id: s.groups.staff }] },
  });
  t.equal(share.status, 204, share.text);
  const read = () => s.call('GET', `/api/usergroup/${handbook}`, { token: s.aliceToken });
  t.equal((await read()).status, 404, 'alice is in no group it is shared with');

  t.equal((await cli(s.dataDir, ['group', 'add', 'platform', 'alice@example.com'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'engineering', 'platform'])).code, 0);
  t.equal((await read()).status, 404, 'platform is inside engineering, not yet inside staff');
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'staff', 'engineering'])).code, 0);
  t.equal((await read()).status, 200, 'platform ⊂ engineering ⊂ staff: alice reads what is shared with staff');

  const me = await s.call('GET', '/api/me', { token: s.aliceToken });
  const names = me.body.meta.groups.map((g: { name: string }) => g.name);
  t.ok(
    ['engineering', 'platform', 'staff'].every((n) => names.includes(n)),
    names.join(),
  );

  // Taking the middle group out (or deleting it) ends it at once.
  t.equal((await cli(s.dataDir, ['group', 'delete', 'engineering'])).code, 0);
  t.equal((await read()).status, 404, 'the chain is broken: the read ends');
  t.same((await cli(s.dataDir, ['--json', 'group', 'show', 'platform'])).json.member_of, []);
});

t.test('the record API: groups inside a group, as linkage; the owner of a group nests what she may read', async (t) => {
  const s = await setUp(t);
  const post = (group: string, ids: string[], token = s.adminToken, method = 'POST') =>
    s.call(method, `/api/usergroup/${group}/relationships/groups`, { token, body: { data: ids.map((id) => ({ type: 'usergroup', id })) } });
  t.equal((await post(s.groups.staff, [s.groups.engineering, s.groups.oncall])).status, 204);
  const listed = await s.call('GET', `/api/usergroup/${s.groups.staff}/relationships/groups`, { token: s.adminToken });
  t.equal(listed.status, 200);
  t.same(listed.body.data.map((d: { id: string }) => d.id).sort(), [s.groups.engineering, s.groups.oncall].sort());
  const cycle = await post(s.groups.oncall, [s.groups.staff]);
  t.equal(cycle.status, 409);
  t.equal(errorCode(cycle), 'conflict');
  t.equal((await post(s.groups.staff, [s.groups.oncall], s.adminToken, 'DELETE')).status, 204);

  // Alice owns two groups of her own and may nest one in the other; not a managed group she cannot change.
  const own = async (name: string) =>
    (await s.call('POST', '/api/usergroup', { token: s.aliceToken, body: { data: { type: 'usergroup', attributes: { name } } } })).body.data.id as string;
  const [outer, inner] = [await own('book club'), await own('readers')];
  t.equal((await post(outer, [inner], s.aliceToken)).status, 204);
  const refused = await post(s.groups.staff, [inner], s.aliceToken);
  t.equal(refused.status, 404, 'staff is not hers to read, let alone change');
  const admins = (await cli(s.dataDir, ['--json', 'group', 'show', 'administrators'])).json.reference_id;
  t.equal((await post(admins, [s.groups.staff])).status, 403, 'not even an administrator puts a group inside administrators');
});

t.test('review: no group inside more than a hundred groups (what bounds every change to the closure)', async (t) => {
  const s = await withAdmin(t);
  const group = async (name: string) => (await s.core.groups.create(s.core.shell, { name })).reference_id;
  const child = await group('child');
  for (let i = 0; i < 100; i++) await s.core.groups.changeGroup(s.core.shell, await group(`p${i}`), child, 'add');
  const last = await group('p100');
  await t.rejects(s.core.groups.changeGroup(s.core.shell, last, child, 'add'), {
    code: 'conflict',
    message: /would put a group inside 101 groups; at most 100 are allowed/,
  });
  // From above too: a group put inside p0 would give the child one more ancestor.
  const top = await group('top');
  await t.rejects(s.core.groups.changeGroup(s.core.shell, top, 'p0', 'add'), { code: 'conflict', message: /inside 101 groups/ });
  t.equal(
    await s
      .db('usergroup_closure')
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    100,
    'nothing changed',
  );
});

t.test("review: a demoted administrator's groups leave the managed groups they were inside", async (t) => {
  const s = await setUp(t);
  // Frank administers, makes a group of his own (managed while he administers) and it goes inside staff.
  t.equal((await s.signup('frank@example.com')).status, 200);
  t.equal((await cli(s.dataDir, ['user', 'promote', 'frank@example.com'])).code, 0);
  const frank = await s.signin('frank@example.com');
  const fg = await s.call('POST', '/api/usergroup', { token: frank, body: { data: { type: 'usergroup', attributes: { name: 'franks' } } } });
  t.equal(fg.status, 201, fg.text);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'staff', fg.body.data.id])).code, 0, 'managed: it may go inside staff');
  t.equal((await cli(s.dataDir, ['user', 'demote', 'frank@example.com'])).code, 0);
  t.same((await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.groups, [], 'demoted: his group is out of staff');

  // Adding bob to his group now gives bob nothing of staff's.
  const frankAgain = await s.signin('frank@example.com');
  const add = await s.call('POST', `/api/usergroup/${fg.body.data.id}/relationships/members`, {
    token: frankAgain,
    body: { data: [{ type: 'user_account', id: s.ids.bob }] },
  });
  t.equal(add.status, 204);
  const bob = (await cli(s.dataDir, ['--json', 'user', 'show', 'bob@example.com'])).json;
  t.notOk(
    bob.groups.some((g: { name: string }) => g.name === 'staff'),
    'bob is not in staff',
  );
});

t.test("review: a group's owner takes out a group an administrator put inside it, even one she cannot read", async (t) => {
  const s = await setUp(t);
  const own = await s.call('POST', '/api/usergroup', { token: s.aliceToken, body: { data: { type: 'usergroup', attributes: { name: 'book club' } } } });
  t.equal(own.status, 201);
  const post = (method: string, token: string) =>
    s.call(method, `/api/usergroup/${own.body.data.id}/relationships/groups`, { token, body: { data: [{ type: 'usergroup', id: s.groups.oncall }] } });
  t.equal((await post('POST', s.adminToken)).status, 204, 'an administrator puts oncall inside her group');
  t.equal((await s.call('GET', `/api/usergroup/${s.groups.oncall}`, { token: s.aliceToken })).status, 404, 'she cannot read oncall');
  t.equal((await post('DELETE', s.aliceToken)).status, 204, 'she takes it out');
  t.same((await cli(s.dataDir, ['--json', 'group', 'show', 'oncall'])).json.member_of, []);
});
