// A SCIM push sync reads people and groups from the store page by page: over more than one page
// it still queues everyone and every group (it once stopped at the first 100,000 groups without a
// word), and a target narrowed to some groups names exactly those, read by id. The page size is
// lowered to 2 here so a handful of people and groups span several pages.
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, withAdmin } from '../helpers/server';
import { startScimTarget } from '../helpers/scim-target';
import { SYNC_PAGE } from '../../src/scim/targets';

t.test('a sync over several pages pushes everyone and every group', async (t) => {
  const saved = SYNC_PAGE.size;
  SYNC_PAGE.size = 2;
  t.teardown(() => void (SYNC_PAGE.size = saved));
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  await setSignup(s, s.adminToken, 2097057);
  const people = ['ada', 'bob', 'cy', 'dee', 'eve'];
  for (const p of people) await s.signup(`${p}@example.com`);
  const groups = ['g1', 'g2', 'g3', 'g4', 'g5'];
  for (const g of groups) t.equal((await cli(s.dataDir, ['group', 'create', g])).code, 0);
  for (const [i, g] of groups.entries()) await cli(s.dataDir, ['group', 'add', g, `${people[i]}@example.com`]);

  const target = await startScimTarget(t);
  const added = await cli(
    s.dataDir,
    ['--json', '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', target.url, '--token-stdin', '--name', 'all'],
    {
      stdin: `${target.token}\n`,
    },
  );
  t.equal(added.code, 0, added.err);
  t.equal(added.json.queued, people.length + 1 + groups.length, 'everyone (the administrator too) and every group queued');
  await s.core.settle();
  t.same([...target.store.users.values()].map((u) => u.userName).sort(), ['admin', ...people].sort(), 'everyone is there');
  t.same([...target.store.groups.values()].map((g) => g.displayName).sort(), groups, 'every group is there');

  const synced = await cli(s.dataDir, ['--json', 'scim', 'target', 'sync', 'all']);
  t.equal(synced.code, 0, synced.err);
  t.equal(synced.json.queued, people.length + 1 + groups.length, 'sync: the same, page by page');
});

t.test("a target's groups are named from their ids", async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  for (const g of ['a1', 'b2', 'c3', 'd4']) t.equal((await cli(s.dataDir, ['group', 'create', g])).code, 0);
  const target = await startScimTarget(t);
  const added = await cli(
    s.dataDir,
    [
      '--json',
      '--webhook-allow-private',
      'loopback',
      'scim',
      'target',
      'add',
      '--url',
      target.url,
      '--token-stdin',
      '--name',
      'some',
      '--group',
      'd4',
      '--group',
      'b2',
    ],
    { stdin: `${target.token}\n` },
  );
  t.equal(added.code, 0, added.err);
  t.same(added.json.target.groups, ['b2', 'd4'], 'the named groups, oldest first');
  const shown = await cli(s.dataDir, ['--json', 'scim', 'target', 'show', 'some']);
  t.same(shown.json.groups, ['b2', 'd4']);
  await s.core.settle();
});
