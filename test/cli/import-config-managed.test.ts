// An import into groups that are already there (issue 73): a group name means the managed group of
// that name as everywhere else (store/groups.ts managedGroupSql): a group an administrator made is
// joined, not refused as the look-alike of a managed group's name.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin, type TestServer } from '../helpers/server';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const inside = async (s: TestServer, group: string) =>
  (await cli(s.dataDir, ['--json', 'group', 'show', group])).json as { members: Array<{ email: string }>; groups: Array<{ name: string }> };

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
