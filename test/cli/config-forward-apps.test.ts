// Forward-auth apps in a configuration file: made, changed and removed by apply (named by host
// and paths), a second apply changing nothing, the export round trip, a managed app refused by
// `app remove`, and the decision the app's gate gives a member of a group inside the allowed one.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, startTestServer, tempDir, withAdmin } from '../helpers/server';

const FILE = `version: 1
groups:
  - name: family
    groups: [kids]
  - name: kids
forward_apps:
  - host: photos.gh.test
    allowed_groups: [family]
    bypass_paths: [/public]
  - host: photos.gh.test
    paths: [/admin]
    allowed_groups: [family]
    two_factor: true
`;

t.test('forward apps from the file: plan, apply, a member through nesting passes, apply again, export, removal', async (t) => {
  const s = await startTestServer(t, { trustProxy: '127.0.0.1', publicUrl: 'http://auth.gh.test:6336', cookieDomain: 'gh.test' });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('kid@example.com');
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, FILE);

  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.match(applied.out, /^\+ forward_app photos\.gh\.test$/m);
  t.match(applied.out, /^\+ forward_app photos\.gh\.test \/admin$/m);
  t.equal((await cli(s.dataDir, ['group', 'add', 'kids', 'kid@example.com'])).code, 0);
  const kid = await s.signin('kid@example.com');
  const ask = (url: string, token?: string) => s.call('GET', '/auth/request', { token, headers: { 'x-original-url': url, 'x-original-method': 'GET' } });
  t.equal((await ask('http://photos.gh.test/', kid)).status, 200, 'kids ⊂ family: the kid passes');
  t.equal((await ask('http://photos.gh.test/public/x')).status, 200, 'a bypass path is open to everyone');
  t.equal((await ask('http://photos.gh.test/admin/', kid)).status, 403, 'the /admin app needs a second factor');

  t.equal((await cli(s.dataDir, ['config', 'plan', file])).code, 0, 'applied: nothing to change');
  const removeByHand = await cli(s.dataDir, ['app', 'remove', 'photos.gh.test']);
  t.not(removeByHand.code, 0, "a managed app is the file's");
  // A path app of the file's host, made by hand, would answer before the file's gate: refused.
  for (const p of ['/', '/public', '/other']) {
    const overriding = await cli(s.dataDir, ['app', 'add', '--host', 'photos.gh.test', '--path', p]);
    t.equal(overriding.code, 3, `app add --path ${p} on a host the file sets`);
    t.match(overriding.err, /managed by the configuration file .*gatehouse\.yaml/);
  }
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', 'other.gh.test', '--path', '/'])).code, 0, "another host is the shell's");

  // Changed in the file: one app loses its bypass path; the other is gone from it.
  fs.writeFileSync(file, FILE.replace('    bypass_paths: [/public]\n', '').replace(/ {2}- host: photos\.gh\.test\n {4}paths: \[\/admin\][\s\S]*$/, ''));
  const changed = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(changed.code, 0, changed.err);
  t.match(changed.out, /^~ forward_app photos\.gh\.test: bypass paths none$/m);
  t.match(changed.out, /^- forward_app photos\.gh\.test \/admin$/m);
  t.equal((await ask('http://photos.gh.test/public/x')).status, 401, 'the bypass path is gone: sign in first');

  // Round trip into an empty store.
  const exported = await cli(s.dataDir, ['config', 'export']);
  const other = await withAdmin(t);
  fs.writeFileSync(path.join(dir, 'exported.yaml'), exported.out);
  t.equal((await cli(other.dataDir, ['config', 'apply', path.join(dir, 'exported.yaml')])).code, 0);
  t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');
});

t.test('bad apps: the line and column, nothing made', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const cases: Array<[string, string, RegExp]> = [
    ['scheme', 'version: 1\nforward_apps:\n  - host: https://x.example\n', /scheme\.yaml:3:5: .*host name like app\.example\.com/],
    ['unmanaged', 'version: 1\nforward_apps:\n  - host: x.example\n    allowed_groups: [nobody]\n', /unmanaged\.yaml:3:5: no group named nobody/],
    ['twice', 'version: 1\nforward_apps:\n  - host: x.example\n  - host: X.example\n', /twice\.yaml:4:11: the app x\.example is named twice/],
    [
      'slash',
      'version: 1\nforward_apps:\n  - host: x.example\n  - host: x.example\n    paths: [/]\n',
      /slash\.yaml:5:12: the whole of x\.example is covered by two apps/,
    ],
    [
      'overlap',
      'version: 1\nforward_apps:\n  - host: x.example\n    paths: [/admin/]\n  - host: x.example\n    paths: [/admin, /other]\n    allowed_groups: [administrators]\n',
      /overlap\.yaml:6:12: \/admin of x\.example is covered by two apps/,
    ],
  ];
  for (const [name, text, expected] of cases) {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(file, text);
    const plan = await cli(s.dataDir, ['config', 'plan', file]);
    t.equal(plan.code, 1, name);
    t.match(plan.err, expected, `${name}: ${plan.err.trim()}`);
  }
  t.same((await cli(s.dataDir, ['--json', 'app', 'list'])).json.apps ?? [], [], 'no app was made');
});
