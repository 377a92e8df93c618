// `gatehouse group …` from the shell, round-tripped with the record API: what the shell changes
// the API shows on its next request, with the usual exit codes and an audit row per change.
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, withAdmin } from '../helpers/server';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const ids: Record<string, string> = {};
  for (const name of ['alice', 'bob']) ids[name] = (await s.signup(`${name}@example.com`)).body[1].Attributes.reference_id;
  return { ...s, ids, aliceToken: await s.signin('alice@example.com') };
}

t.test('group create, add, show, remove, delete: round trips with the API', async (t) => {
  const s = await setUp(t);
  const created = await cli(s.dataDir, ['--json', 'group', 'create', 'team', '--owner', 'alice@example.com']);
  t.equal(created.code, 0, created.err);
  t.match(created.json, { name: 'team', owner: 'alice@example.com', system_role: null, member_count: 0, members: [] });
  t.equal(created.json.permission, 60800, "the usergroup table's default permission");
  const team = created.json.reference_id as string;

  const added = await cli(s.dataDir, ['--json', 'group', 'add', 'team', 'bob@example.com']);
  t.equal(added.code, 0, added.err);
  t.same(added.json, { group: { reference_id: team, name: 'team' }, account: { reference_id: s.ids.bob, email: 'bob@example.com' }, changed: true });
  t.equal((await cli(s.dataDir, ['--json', 'group', 'add', 'TEAM', 'bob@example.com'])).json.changed, false, 'again (names ignore case): a no-op');

  // The owner sees the member the shell added, on her next request.
  const listed = await s.call('GET', `/api/usergroup/${team}/relationships/members`, { token: s.aliceToken });
  t.equal(listed.status, 200);
  t.same(listed.body.data, [{ type: 'user_account', id: s.ids.bob }]);
  // And what the API changes, the shell shows.
  t.equal(
    (
      await s.call('POST', `/api/usergroup/${team}/relationships/members`, {
        token: s.aliceToken,
        body: { data: [{ type: 'user_account', id: s.ids.alice }] },
      })
    ).status,
    204,
  );
  const shown = await cli(s.dataDir, ['--json', 'group', 'show', team]);
  t.equal(shown.code, 0, shown.err);
  t.same(
    shown.json.members.map((m: { email: string }) => m.email),
    ['alice@example.com', 'bob@example.com'],
  );
  const human = await cli(s.dataDir, ['group', 'show', 'team']);
  t.match(human.out, /name:\s+team/);
  t.match(human.out, /bob@example\.com/);

  const list = await cli(s.dataDir, ['--json', 'group', 'list']);
  t.equal(list.code, 0);
  const row = list.json.groups.find((g: { reference_id: string }) => g.reference_id === team);
  t.match(row, { name: 'team', owner: 'alice@example.com', member_count: 2 });
  t.ok(list.json.groups.some((g: { system_role: string }) => g.system_role === 'administrators'));
  t.match((await cli(s.dataDir, ['group', 'list'])).out, /^NAME\s+REFERENCE_ID\s+ROLE\s+OWNER\s+MEMBERS\s+PERMISSION/);

  const removed = await cli(s.dataDir, ['--json', 'group', 'remove', 'team', 'bob@example.com']);
  t.equal(removed.json.changed, true);
  t.equal((await cli(s.dataDir, ['group', 'remove', 'team', 'bob@example.com'])).out, 'bob@example.com: not in team; nothing changed\n');
  t.same(
    (await s.call('GET', `/api/usergroup/${team}/relationships/members`, { token: s.aliceToken })).body.data.map((d: { id: string }) => d.id),
    [s.ids.alice],
  );

  const deleted = await cli(s.dataDir, ['--json', 'group', 'delete', 'team']);
  t.equal(deleted.code, 0, deleted.err);
  t.same(deleted.json, { group: { reference_id: team, name: 'team' }, deleted: true });
  t.equal((await s.call('GET', `/api/usergroup/${team}`, { token: s.aliceToken })).status, 404);
  t.equal(
    await s
      .db('membership')
      .join('usergroup', 'usergroup.id', 'membership.usergroup_id')
      .where('usergroup.reference_id', team)
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    0,
  );

  const audit = (await cli(s.dataDir, ['--json', 'audit'])).json.events as Array<{ event: string; details: Record<string, unknown> }>;
  for (const e of ['group_created', 'group_member_added', 'group_member_removed', 'group_deleted']) {
    const row = audit.find((r) => r.event === e);
    t.ok(row, `${e} audited`);
    t.equal(row?.details.group, team, `${e} names the group`);
  }
  t.ok(
    audit.filter((r) => r.event === 'group_member_added').some((r) => r.details.via === 'http'),
    'the API change is audited as http',
  );
  t.ok(
    audit.filter((r) => r.event === 'group_member_added').some((r) => r.details.via === 'cli'),
    'the shell change as cli',
  );
});

t.test('group errors: exit codes name the problem', async (t) => {
  const s = await setUp(t);
  const run = (...args: string[]) => cli(s.dataDir, args);
  t.equal((await run('group', 'create', 'team')).code, 0, 'no owner: only administrators manage it');
  const twice = await run('--json', 'group', 'create', 'Team');
  t.equal(twice.code, 3, 'a second group of one name from the shell: exit 3');
  t.match(twice.err, /name_taken/);
  t.equal((await run('group', 'create', 'users')).code, 2, 'a reserved name: exit 2');
  t.equal((await run('group', 'create', 'x', '--permission', '-1')).code, 2, 'a bad permission: exit 2');
  t.equal((await run('group', 'create', 'y', '--owner', 'nobody@example.com')).code, 4, 'an unknown owner: exit 4');
  t.equal((await run('group', 'show', 'nosuch')).code, 4, 'an unknown group: exit 4');
  t.equal((await run('group', 'add', 'team', 'nobody@example.com')).code, 4, 'an unknown account: exit 4');
  t.equal((await run('group', 'delete', 'users')).code, 3, 'a system group cannot be deleted: exit 3');
  t.equal((await run('group', 'add', 'users', 'bob@example.com')).code, 3, 'users is not changed by hand: exit 3');

  // Names are unique only when made here: the API lets two accounts each have a "crew".
  for (const token of [s.aliceToken, await s.signin('bob@example.com')]) {
    await s.call('POST', '/api/usergroup', { token, body: { data: { type: 'usergroup', attributes: { name: 'crew' } } } });
  }
  const ambiguous = await run('group', 'show', 'crew');
  t.equal(ambiguous.code, 2, 'an ambiguous name: exit 2');
  t.match(ambiguous.err, /2 groups are named crew; name one by its id/);

  // The last administrator stays on this path too; two administrators both administer.
  const last = await run('--json', 'group', 'remove', 'administrators', 'admin@example.com');
  t.equal(last.code, 3);
  t.match(last.err, /last_administrator/);
  t.equal((await run('group', 'add', 'administrators', 'bob@example.com')).code, 0, 'adding to administrators promotes');
  t.equal((await run('--json', 'user', 'show', 'bob@example.com')).json.administrator, true);
  t.equal((await run('group', 'remove', 'administrators', 'admin@example.com')).code, 0, 'with two, one may go');
  t.equal((await run('group', 'remove', 'administrators', 'bob@example.com')).code, 3, 'but not the last');
  const events = ((await run('--json', 'audit')).json.events as Array<{ event: string }>).map((e) => e.event);
  t.ok(events.includes('administrator_added') && events.includes('administrator_removed'));
});
