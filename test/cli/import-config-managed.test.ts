// An import into groups that are already there (issue 73). A Keycloak subgroup whose parent a
// configuration file manages goes inside it (it was reported and left outside before, so its
// people were not in the parent): the file keeps the groups inside the parent that it names, and
// leaves the import's beside them; a second apply of the same file changes nothing, and a file that
// changes its own list leaves the import's subgroup where it is. The file's own groups are still
// the file's: the import never nests two of them, and by hand nothing is put in beside them (taking
// the import's subgroup out is allowed). People join a file's group as `group add` has them. And a
// group name means the managed group of that name as everywhere else (store/groups.ts
// managedGroupSql): a group an administrator made is joined, not refused as a look-alike.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin, type TestServer } from '../helpers/server';

type Json = Record<string, any>;

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const inside = async (s: TestServer, group: string) =>
  (await cli(s.dataDir, ['--json', 'group', 'show', group])).json as { members: Array<{ email: string }>; groups: Array<{ name: string }> };

/** Whether the person is in the group, directly or through the groups inside it. */
async function inGroup(s: TestServer, email: string, group: string): Promise<boolean> {
  const account = await s.db('user_account').where({ email_key: email }).first('id');
  const g = await s.db('usergroup').where({ name: group }).first('id');
  const direct = await s.db('membership').where({ account_id: account.id, usergroup_id: g.id }).first();
  const nested = await s
    .db('membership as m')
    .join('usergroup_closure as c', 'c.descendant_id', 'm.usergroup_id')
    .where({ 'm.account_id': account.id, 'c.ancestor_id': g.id })
    .first();
  return direct !== undefined || nested !== undefined;
}

const REALM = {
  realm: 'acme',
  groups: [
    {
      id: 'g1',
      name: 'staff',
      path: '/staff',
      subGroups: [
        { id: 'g2', name: 'engineering', path: '/staff/engineering', subGroups: [] },
        { id: 'g3', name: 'platform', path: '/staff/platform', subGroups: [] },
      ],
    },
  ],
  users: [
    { username: 'lea', email: 'lea@example.com', firstName: 'Lea', enabled: true, emailVerified: true, groups: ['/staff/engineering'] },
    { username: 'max', email: 'max@example.com', firstName: 'Max', enabled: true, emailVerified: true, groups: ['/staff'] },
    { username: 'pia', email: 'pia@example.com', firstName: 'Pia', enabled: true, emailVerified: true, groups: ['/staff/platform'] },
  ],
};

t.test('a Keycloak subgroup under a group a configuration file manages goes inside it; the file leaves it there', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  // The file manages staff and platform, and puts nothing inside staff.
  const config = write(dir, 'gatehouse.yaml', 'version: 1\ngroups:\n  - name: staff\n  - name: platform\n  - name: ops\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', config])).code, 0);

  const realm = write(dir, 'realm.json', JSON.stringify(REALM));
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'keycloak', realm]);
  t.equal(r.code, 0, r.err);
  t.equal(r.json.created, 3, JSON.stringify(r.json.people));
  const outcome = (name: string) => r.json.groups.find((g: Json) => g.name === name);
  t.match(outcome('staff'), { outcome: 'existing' }, 'the file’s group is used, not skipped');
  t.match(outcome('engineering'), { outcome: 'created', nestedIn: 'staff' }, 'the subgroup is put inside its parent');
  t.match(
    outcome('platform'),
    { outcome: 'existing', reason: /not put inside staff: the group staff is managed by the configuration file .*gatehouse\.yaml: change it there/ },
    'two of the file’s groups: their nesting is the file’s, said in the report',
  );
  t.notOk(outcome('platform').nestedIn);
  t.ok(await inGroup(s, 'lea@example.com', 'staff'), 'a person of the subgroup is in the parent');
  t.ok(await inGroup(s, 'max@example.com', 'staff'), 'a person of the parent joins it (who is in a group is not the file’s)');
  t.ok(await inGroup(s, 'pia@example.com', 'platform'));
  t.notOk(await inGroup(s, 'pia@example.com', 'staff'), 'not through a nesting the file did not state');
  t.same(
    (await inside(s, 'staff')).groups.map((g) => g.name),
    ['engineering'],
  );

  // The file again: nothing to change, nothing changed; the import's subgroup stays inside.
  const plan = await cli(s.dataDir, ['config', 'plan', config]);
  t.equal(plan.code, 0, `nothing to change: ${plan.out}`);
  const again = await cli(s.dataDir, ['--json', 'config', 'apply', config]);
  t.equal(again.code, 0, again.err);
  t.same(again.json.changes, [], 'a second apply changes nothing');
  t.ok(await inGroup(s, 'lea@example.com', 'staff'), 'still in the parent after the apply');

  // The file changes its own list: its groups come and go, the import's subgroup stays.
  const withOps = write(dir, 'gatehouse.yaml', 'version: 1\ngroups:\n  - name: staff\n    groups: [ops]\n  - name: platform\n  - name: ops\n');
  const added = await cli(s.dataDir, ['config', 'apply', withOps]);
  t.equal(added.code, 0, added.err);
  t.match(added.out, /^~ group staff: groups inside: ops \(was none\)$/m, 'the file’s list is its own groups');
  t.same(
    (await inside(s, 'staff')).groups.map((g) => g.name),
    ['engineering', 'ops'],
  );
  const without = write(dir, 'gatehouse.yaml', 'version: 1\ngroups:\n  - name: staff\n  - name: platform\n  - name: ops\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', without])).code, 0);
  t.same(
    (await inside(s, 'staff')).groups.map((g) => g.name),
    ['engineering'],
    'the file took out its own, not the import’s',
  );

  // By hand: nothing goes in beside the file's; the import's subgroup may be taken out.
  t.equal((await cli(s.dataDir, ['group', 'create', 'by-hand'])).code, 0);
  const put = await cli(s.dataDir, ['group', 'add-group', 'staff', 'by-hand']);
  t.not(put.code, 0, 'refused');
  t.match(put.err, /managed by the configuration file/);
  const out = await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering']);
  t.equal(out.code, 0, out.err);
  t.notOk(await inGroup(s, 'lea@example.com', 'staff'));

  // The import again puts it back; the file still changes nothing.
  const reimport = await cli(s.dataDir, ['--json', 'import', '--from', 'keycloak', realm]);
  t.equal(reimport.code, 0, reimport.err);
  t.match(
    reimport.json.groups.find((g: Json) => g.name === 'engineering'),
    { outcome: 'existing', nestedIn: 'staff' },
  );
  t.equal((await cli(s.dataDir, ['config', 'plan', without])).code, 0);

  // When the file names the subgroup, it becomes the file's: out when the file leaves it out.
  const named = write(dir, 'gatehouse.yaml', 'version: 1\ngroups:\n  - name: staff\n  - name: platform\n  - name: ops\n  - name: engineering\n');
  const takeOver = await cli(s.dataDir, ['config', 'apply', named]);
  t.equal(takeOver.code, 0, takeOver.err);
  t.same((await inside(s, 'staff')).groups, [], 'a group the file names is inside staff only where the file says');
  t.equal((await cli(s.dataDir, ['config', 'plan', named])).code, 0, 'and applying it again changes nothing');
});

t.test('a group name means the managed group of that name, an administrator’s included', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const made = await cli(s.dataDir, ['group', 'create', 'team', '--owner', 'admin@example.com']);
  t.equal(made.code, 0, made.err);
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', write(dir, 'people.csv', 'email,name,groups\nann@example.com,Ann,team\n')]);
  t.equal(r.code, 0, r.err);
  t.match(r.json.groups, [{ name: 'team', outcome: 'existing' }], 'the administrator’s group');
  t.same(
    (await inside(s, 'team')).members.map((m) => m.email),
    ['ann@example.com'],
  );
  t.equal((await s.db('usergroup').where({ name: 'team' })).length, 1, 'no second team');
});
