// Configuration as a file, its first kinds (managed groups with the groups inside them, and who
// may run each action): export, plan (exit 0 / 2 / 1 with the line and column), apply in one
// transaction, a second apply changing nothing, a round trip into an empty store, deletion of only
// what an earlier apply made, objects the file manages read-only elsewhere, and files that try
// YAML's tricks.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin } from '../helpers/server';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const FILE = `version: 1
groups:
  - name: staff
    groups: [engineering]
  - name: engineering
    groups: [platform]
  - name: platform
actions:
  signup: {guest: true}
`;

t.test('plan, apply, apply again, export: the store matches the file and a second apply changes nothing', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  t.equal((await cli(s.dataDir, ['group', 'create', 'by-hand'])).code, 0);
  const file = write(dir, 'gatehouse.yaml', FILE);

  const plan = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(plan.code, 2, `something would change: ${plan.err}`);
  t.match(plan.out, /^\+ group staff$/m);
  t.match(plan.out, /^\+ group platform$/m);
  t.match(plan.out, /^~ group staff: groups inside: engineering \(was none\)$/m);
  t.match(plan.out, /^~ action signup: permission \d+ \(was \d+\)$/m);
  t.match(plan.out, /^ {2}group by-hand: made by hand, not in the file \(left alone\)$/m);
  t.equal((await cli(s.dataDir, ['--json', 'group', 'list'])).json.groups.length, 4, 'a plan changes nothing (administrators, users, home, by-hand)');

  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.equal(applied.out, plan.out, 'apply did what plan said');
  const again = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(again.code, 0, 'applied: nothing to change');
  t.match(again.out, /by-hand: made by hand/);
  const second = await cli(s.dataDir, ['--json', 'config', 'apply', file]);
  t.same(second.json.changes, [], 'a second apply changes nothing');
  t.same(
    (await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.groups.map((g: { name: string }) => g.name),
    ['engineering'],
  );
  const signup = (await cli(s.dataDir, ['--json', 'action', 'get-permission', 'signup'])).json;
  t.equal(signup.decoded.guest.execute, true, 'guest signup is on');

  // Objects the file manages are the file's: the shell and the API say so and change nothing.
  const del = await cli(s.dataDir, ['group', 'delete', 'platform']);
  t.equal(del.code, 3);
  t.match(del.err, new RegExp(`the group platform is managed by the configuration file ${file.replace(/[.]/g, '\\.')}: change it there`));
  t.equal((await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering'])).code, 3);
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'off'])).code, 3);
  const nestByHand = await cli(s.dataDir, ['group', 'add-group', 'by-hand', 'platform']);
  t.equal(nestByHand.code, 0, 'a hand-made group may hold a managed one');
  const platform = (await cli(s.dataDir, ['--json', 'group', 'show', 'platform'])).json.reference_id;
  const apiDelete = await s.call('DELETE', `/api/usergroup/${platform}`, { token: s.adminToken });
  t.equal(apiDelete.status, 403, 'the record API too');
  // People are not the file's: members come and go by hand.
  t.equal((await cli(s.dataDir, ['group', 'add', 'platform', 'admin@example.com'])).code, 0);

  // Round trip: export, apply into an empty store, export again: the same document.
  const exported = await cli(s.dataDir, ['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  t.match(exported.out, /- name: by-hand\n/);
  t.match(exported.out, /- name: engineering\n {4}groups:\n {6}- platform\n/);
  const other = await withAdmin(t);
  const copy = write(dir, 'exported.yaml', exported.out);
  t.equal((await cli(other.dataDir, ['config', 'apply', copy])).code, 0);
  t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');

  // A second file: what it names it takes over from the first; the first file's others are left alone.
  const secondFile = write(dir, 'second.yaml', 'version: 1\ngroups:\n  - name: staff\n');
  const secondPlan = await cli(s.dataDir, ['config', 'plan', secondFile]);
  t.equal(secondPlan.code, 2, secondPlan.err);
  t.match(secondPlan.out, new RegExp(`^ {2}group staff: taken over from ${file.replace(/[.]/g, '\\.')}: managed by .*second\\.yaml from now on$`, 'm'));
  t.match(secondPlan.out, new RegExp(`^ {2}group platform: managed by ${file.replace(/[.]/g, '\\.')}, not in the file \\(left alone\\)$`, 'm'));
  t.notMatch(secondPlan.out, /^- /m, "nothing of the first file's deleted");

  // Deleted: only what an apply made and the file no longer names.
  fs.writeFileSync(file, 'version: 1\ngroups:\n  - name: staff\n');
  const shrunk = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(shrunk.code, 0, shrunk.err);
  t.match(shrunk.out, /^- group engineering$/m);
  t.match(shrunk.out, /^- group platform$/m);
  t.match(shrunk.out, /^- action user_account\/signup: no longer managed \(its permission stays\)$/m);
  t.match(shrunk.out, /by-hand: made by hand/);
  const left = (await cli(s.dataDir, ['--json', 'group', 'list'])).json.groups.map((g: { name: string }) => g.name);
  t.ok(left.includes('by-hand') && left.includes('staff') && !left.includes('platform'), left.join());
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'off'])).code, 0, "the action is the shell's again");
});

t.test('a bad file: exit 1 from plan, the line and column and what was expected; nothing changed', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const cases: Array<[string, string, RegExp]> = [
    ['syntax', 'version: 1\ngroups: [\n', /syntax\.yaml:\d+:\d+: /],
    ['duplicate', 'version: 1\nversion: 1\n', /duplicate\.yaml:2:1: Map keys must be unique/],
    ['unknown key', 'version: 1\ngroupz: []\n', /unknown key\.yaml:2:1: the file must NOT have additional properties \(groupz\)/],
    ['proto', 'version: 1\n__proto__: {isAdmin: true}\n', /proto\.yaml:2:1: the file must NOT have additional properties \(__proto__\)/],
    ['wrong type', 'version: 1\ngroups:\n  - name: 7\n', /wrong type\.yaml:3:11: groups\[0\]\.name must be string/],
    ['no version', 'groups: []\n', /no version\.yaml:1:1: the file must have required property 'version'/],
    ['inner twice', 'version: 1\ngroups:\n  - name: a\n    groups: [b, B]\n  - name: b\n', /inner twice\.yaml:4:17: B is named twice \(names ignore case\)/],
    ['inner', 'version: 1\ngroups:\n  - name: staff\n    groups: [nobody]\n', /inner\.yaml:4:14: nobody is not a group of this file/],
    ['twice', 'version: 1\ngroups:\n  - name: staff\n  - name: STAFF\n', /twice\.yaml:4:11: the group STAFF is named twice/],
    ['reserved', 'version: 1\ngroups:\n  - name: administrators\n', /reserved\.yaml:3:11: the group name administrators is reserved/],
    ['cycle', 'version: 1\ngroups:\n  - name: a\n    groups: [b]\n  - name: b\n    groups: [a]\n', /cycle\.yaml:\d+:\d+: a cycle/],
    ['tag', 'version: 1\ngroups:\n  - name: !foo staff\n', /tag\.yaml:3:11: .*tag/i],
    ['documents', 'version: 1\n---\nversion: 1\n', /documents\.yaml:2:1: a configuration file is one YAML document/],
    ['yes', 'version: 1\nactions:\n  signup: {guest: yes}\n', /yes\.yaml:3:19: actions\.signup\.guest must be boolean/],
    [
      'same action',
      'version: 1\nactions:\n  user_account/signup: {guest: false}\n  signup: {guest: true}\n',
      /same action\.yaml:4:3: signup names user_account\/signup again/,
    ],
    ['latin1', 'version: 1\ngroups:\n  - name: caf\xe9\n', /latin1\.yaml: not UTF-8 text/],
    ['no action', 'version: 1\nactions:\n  launch: {guest: true}\n', /no action\.yaml:3:3: no action named launch/],
    [
      'laughs',
      `version: 1\nx0: &a0 [1,1,1,1,1,1,1,1,1,1]\n${Array.from({ length: 8 }, (_, i) => `x${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(',')}]`).join('\n')}\n`,
      /laughs\.yaml: .*(alias|Excessive)/i,
    ],
  ];
  for (const [name, text, expected] of cases) {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(file, name === 'latin1' ? Buffer.from(text, 'latin1') : text);
    const plan = await cli(s.dataDir, ['config', 'plan', file]);
    t.equal(plan.code, 1, `${name}: exit 1`);
    t.match(plan.err, expected, `${name}: ${plan.err.trim()}`);
    const apply = await cli(s.dataDir, ['config', 'apply', file]);
    t.not(apply.code, 0, `${name}: apply refuses it too`);
  }
  t.equal((await cli(s.dataDir, ['--json', 'group', 'list'])).json.groups.length, 3, 'nothing was made');
  t.equal((await cli(s.dataDir, ['config', 'plan', path.join(dir, 'missing.yaml')])).code, 1, 'a file that is not there');
  const device = await cli(s.dataDir, ['config', 'plan', '/dev/zero']);
  t.equal(device.code, 1, 'a device is no configuration file (it is not read to its end)');
  t.match(device.err, /\/dev\/zero is not a file/);
  const schema = await cli(s.dataDir, ['config', 'schema']);
  t.equal(JSON.parse(schema.out).title, 'Gatehouse configuration file');
});

t.test('a group made by hand and taken over by a file is let go, never deleted, once the file drops it', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  t.equal((await cli(s.dataDir, ['group', 'create', 'handteam'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add', 'handteam', 'admin@example.com'])).code, 0);
  const takeOver = await cli(s.dataDir, ['config', 'apply', write(dir, 'a.yaml', 'version: 1\ngroups:\n  - name: HANDTEAM\n')]);
  t.match(takeOver.out, /^nothing to change\n {2}group HANDTEAM: taken over/);
  t.equal((await cli(s.dataDir, ['group', 'delete', 'handteam'])).code, 3, 'managed by the file now');
  const dropped = await cli(s.dataDir, ['config', 'apply', write(dir, 'a.yaml', 'version: 1\n')]);
  t.equal(dropped.code, 0, dropped.err);
  t.match(dropped.out, /^- group handteam: no longer managed \(made by hand: kept\)$/m);
  const kept = await cli(s.dataDir, ['--json', 'group', 'show', 'handteam']);
  t.equal(kept.code, 0, 'the group is still there');
  t.same(
    kept.json.members.map((m: { email: string }) => m.email),
    ['admin@example.com'],
    'with its people',
  );
  t.equal((await cli(s.dataDir, ['group', 'delete', 'handteam'])).code, 0, "and the shell's to change again");
});
