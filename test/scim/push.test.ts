// SCIM push: Gatehouse provisions an app's SCIM endpoint, served here by scimmy (an independent
// SCIM 2.0 implementation that checks every request against the RFC 7643 schemas). People added
// to a group appear there, a disabled person becomes active:false, one removed from the group or
// deleted disappears, a renamed group follows; a target down for a while catches up with nothing
// lost; a target that already holds someone adopts them by userName, never duplicates; sync puts
// back what was deleted there by hand. Pushes are deliveries of the one queue.
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { setSignup, startTestServer, type TestServer, withAdmin } from '../helpers/server';
import { startScimTarget, type ScimTarget } from '../helpers/scim-target';

type Json = Record<string, any>;
const LOOPBACK = ['--webhook-allow-private', 'loopback'];

const refOf = async (s: TestServer, email: string): Promise<string> => (await cli(s.dataDir, ['--json', 'user', 'show', email])).json.reference_id;
const users = (target: ScimTarget) => [...target.store.users.values()];
const byExternal = (target: ScimTarget, ref: string) => users(target).filter((u) => u.externalId === ref);
const groupNamed = (target: ScimTarget, name: string) => [...target.store.groups.values()].find((g) => g.displayName === name);

async function addTarget(t: Parameters<typeof withAdmin>[0], s: TestServer, target: ScimTarget, ...more: string[]) {
  const added = await cli(s.dataDir, ['--json', ...LOOPBACK, 'scim', 'target', 'add', '--url', target.url, '--token-stdin', '--name', 'app', ...more], {
    stdin: `${target.token}\n`,
  });
  t.equal(added.code, 0, added.err);
  return added.json;
}

t.test('members of a group pushed; disabled, removed, deleted and renamed follow', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  await setSignup(s, s.adminToken, 2097057);
  for (const e of ['ada@example.com', 'bob@example.com', 'cy@example.com', 'out@example.com']) await s.signup(e);
  await cli(s.dataDir, ['group', 'create', 'staff']);
  for (const e of ['ada@example.com', 'bob@example.com']) await cli(s.dataDir, ['group', 'add', 'staff', e]);
  const target = await startScimTarget(t);
  const added = await addTarget(t, s, target, '--group', 'staff');
  t.equal(added.queued, 3, 'the first sync: two people and their group');
  t.same(added.target.groups, ['staff']);
  await s.core.settle();

  const [ada, bob, cy] = await Promise.all(['ada@example.com', 'bob@example.com', 'cy@example.com'].map((e) => refOf(s, e)));
  t.equal(users(target).length, 2, 'only the group members');
  t.match(byExternal(target, ada), [{ userName: 'ada', emails: [{ value: 'ada@example.com' }], active: true }], 'externalId = the reference id');
  const staff = groupNamed(target, 'staff');
  t.ok(staff, 'the group is there');
  t.same(
    staff!.members.map((m: Json) => m.value).sort(),
    [byExternal(target, ada)[0].id, byExternal(target, bob)[0].id].sort(),
    'members by the ids the app gave',
  );

  await cli(s.dataDir, ['group', 'add', 'staff', 'cy@example.com']);
  await s.core.settle();
  t.equal(byExternal(target, cy).length, 1, 'a person added to the group appears');
  t.equal(groupNamed(target, 'staff')!.members.length, 3);

  t.equal((await cli(s.dataDir, ['user', 'disable', 'ada@example.com'])).code, 0);
  await s.core.settle();
  t.equal(byExternal(target, ada)[0].active, false, 'disabled: active:false there');

  await cli(s.dataDir, ['group', 'remove', 'staff', 'bob@example.com']);
  await s.core.settle();
  t.same(byExternal(target, bob), [], 'removed from the group: gone from the app');
  t.equal(groupNamed(target, 'staff')!.members.length, 2);

  t.equal((await s.call('DELETE', `/api/user_account/${cy}`, { token: s.adminToken })).status, 204);
  await s.core.settle();
  t.same(byExternal(target, cy), [], 'deleted: gone from the app');

  const staffRef = (await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.reference_id;
  t.equal(
    (
      await s.call('PATCH', `/api/usergroup/${staffRef}`, {
        token: s.adminToken,
        body: { data: { type: 'usergroup', id: staffRef, attributes: { name: 'crew' } } },
      })
    ).status,
    200,
  );
  await s.core.settle();
  t.ok(groupNamed(target, 'crew'), 'a renamed group follows');
  t.notOk(
    users(target).some((u) => u.userName === 'out'),
    'nobody outside the group was pushed',
  );

  const shown = (await cli(s.dataDir, ['--json', 'scim', 'target', 'show', 'app'])).json;
  t.match(shown, { name: 'app', users: 1, group_count: 1, pending: 0, failed: 0 });
  t.notOk(JSON.stringify(shown).includes(target.token), 'the token is never shown');
  const audit = (await cli(s.dataDir, ['--json', 'audit'])).json.events as Json[];
  t.ok(audit.some((e) => e.event === 'scim_target_added'));
  t.notOk(s.logs.join('').includes(target.token), 'nor logged');
});

t.test('a target down for a while catches up; one holding someone already adopts them; sync restores', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'], rateLimits: false }, undefined, { clock });
  // Messages queued by a shell command carry the wall clock's time: the server's clock catches up first.
  const settle = async () => {
    clock.set(Math.max(clock.now(), Date.now()));
    await s.core.settle();
  };
  await cli(s.dataDir, ['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { env: { PW: 'correct horse battery staple' } });
  await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'on']);
  await s.signup('ada@example.com');
  const target = await startScimTarget(t);
  // Made by hand in the app before Gatehouse pushed: same userName, no externalId.
  target.store.users.set('hand-made', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: 'hand-made', userName: 'ada', meta: {} });
  await addTarget(t, s, target);
  await settle();
  const ada = await refOf(s, 'ada@example.com');
  t.equal(users(target).filter((u) => u.userName === 'ada').length, 1, 'no duplicate');
  t.equal(byExternal(target, ada)[0]?.id, 'hand-made', 'the one there was adopted (its externalId set)');

  await target.down();
  await s.signup('bo@example.com');
  await s.signup('cy@example.com');
  await cli(s.dataDir, ['user', 'disable', 'ada@example.com']);
  await settle();
  const listed = (await cli(s.dataDir, ['--json', 'scim', 'target', 'list'])).json.targets[0];
  t.equal(listed.pending, 3, 'three changes wait');
  t.match(listed.last_error, /ECONNREFUSED/, 'with the last error');
  t.match((await cli(s.dataDir, ['deliveries'])).out, /scim +user\.sync \(app\) +pending/, 'gatehouse deliveries lists them');

  await target.up();
  for (let i = 0; i < 3; i++) {
    const due = await s.db('delivery').where({ state: 'pending' }).min({ at: 'next_at' }).first();
    if (!due?.at) break;
    clock.set(Number(due.at));
    await settle();
  }
  t.same(
    users(target)
      .map((u) => u.userName)
      .sort(),
    ['admin', 'ada', 'bo', 'cy'].sort(),
    'caught up: everyone there, once',
  );
  t.equal(byExternal(target, ada)[0].active, false, 'and the change made while it was down');
  t.match((await cli(s.dataDir, ['--json', 'scim', 'target', 'show', 'app'])).json, { pending: 0, failed: 0, last_error: null });

  // Deleted in the app by hand: sync puts it back, and touches nobody twice.
  const bo = await refOf(s, 'bo@example.com');
  target.store.users.delete(byExternal(target, bo)[0].id);
  const synced = await cli(s.dataDir, ['--json', 'scim', 'target', 'sync', 'app']);
  t.equal(synced.code, 0, synced.err);
  await settle();
  t.equal(byExternal(target, bo).length, 1, 'sync restored it');
  t.equal(users(target).length, 4, 'no duplicates');

  t.equal((await cli(s.dataDir, ['scim', 'target', 'remove', 'app'])).code, 0);
  t.equal(
    await s
      .db('delivery')
      .where({ kind: 'scim', state: 'pending' })
      .count({ n: '*' })
      .first()
      .then((r: any) => Number(r.n)),
    0,
  );
  await s.signup('late@example.com');
  await settle();
  t.notOk(
    users(target).some((u) => u.userName === 'late'),
    'a removed target gets nothing more',
  );
});

t.test('refused targets and inputs', async (t) => {
  const s = await withAdmin(t);
  const inside = await cli(s.dataDir, ['scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2', '--token-stdin'], { stdin: 'x' });
  t.equal(inside.code, 2, 'loopback refused unless allowed');
  t.match(inside.err, /loopback address/);
  const noToken = await cli(s.dataDir, [...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2']);
  t.match(noToken.err, /--token-stdin/);
  const empty = await cli(s.dataDir, [...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2', '--token-stdin'], { stdin: '\n' });
  t.match(empty.err, /token is 1 to 4,096 characters/);
  const ftp = await cli(s.dataDir, [...LOOPBACK, 'scim', 'target', 'add', '--url', 'ftp://127.0.0.1/scim', '--token-stdin'], { stdin: 'x' });
  t.match(ftp.err, /http or https/);
  const group = await cli(s.dataDir, [...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2', '--token-stdin', '--group', 'nope'], {
    stdin: 'x',
  });
  t.equal(group.code, 4, 'an unknown group');
  t.equal((await cli(s.dataDir, ['scim', 'target', 'show', 'nope'])).code, 4);
  t.same((await cli(s.dataDir, ['--json', 'scim', 'target', 'list'])).json.targets, [], 'nothing was added');
});
