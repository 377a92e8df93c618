// `serve --config FILE` (and GATEHOUSE_CONFIG) with the packaged executable: the file is applied
// before anything listens, the log says what changed, a restart with the same file changes
// nothing, and a bad file stops the start with its line and column (nothing listening, nothing made).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exeFolder, runExe, serveExe } from '../helpers/exe';

const FILE = `version: 1
groups:
  - name: staff
    groups: [engineering]
  - name: engineering
actions:
  signup: {guest: true}
`;

t.test('serve --config applies the file before listening; GATEHOUSE_CONFIG too; a bad file stops the start', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, FILE);
  const data = ['--data-dir', path.join(dir, 'data')];
  const first = await serveExe(t, exe, [...data, '--config', file], { env, cwd: dir });
  // Changed: staff's nesting (signup was open already: a new store's, taken over, changes nothing).
  t.match(first.output(), /"event":"config_applied".*"created":2,"changed":1,"deleted":0/, 'the log says what the file changed');
  const shown = await runExe(exe, [...data, '--json', 'group', 'show', 'staff'], { env, cwd: dir });
  t.equal(shown.code, 0, shown.stderr);
  t.same(
    JSON.parse(shown.stdout).groups.map((g: { name: string }) => g.name),
    ['engineering'],
  );
  // Signup is open to guests: the file said so.
  const signup = await fetch(`${first.url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      attributes: { email: 'ada@example.com', name: 'Ada', password: 'a long enough password', passwordConfirm: 'a long enough password' },
    }),
  });
  t.equal(signup.status, 200);
  t.equal(await first.stop(), 0);

  // Ada's signup made the first administrator, which closes guest signup; the file opens it again.
  const again = await serveExe(t, exe, data, { env: { ...env, GATEHOUSE_CONFIG: file }, cwd: dir });
  t.match(again.output(), /"event":"config_applied".*"created":0,"changed":1,"deleted":0/, 'the same file again: only what changed since is put back');
  t.equal(await again.stop(), 0);
  const third = await serveExe(t, exe, data, { env: { ...env, GATEHOUSE_CONFIG: file }, cwd: dir });
  t.match(third.output(), /"event":"config_applied".*"created":0,"changed":0,"deleted":0/, 'and once more: nothing');
  t.equal(await third.stop(), 0);

  fs.writeFileSync(file, 'version: 1\ngroups:\n  - name: staff\n    groups: [nobody]\n');
  const bad = await runExe(exe, ['serve', '--port', '0', ...data, '--config', file], { env, cwd: dir });
  t.not(bad.code, 0, 'a bad file stops the start');
  t.match(bad.stderr, /gatehouse\.yaml:4:14: nobody is not a group of this file/);
  t.notMatch(bad.stdout, /"event":"listening"/, 'nothing listened');
  const still = await runExe(exe, [...data, '--json', 'group', 'show', 'staff'], { env, cwd: dir });
  t.same(
    JSON.parse(still.stdout).groups.map((g: { name: string }) => g.name),
    ['engineering'],
    'nothing changed',
  );
});
