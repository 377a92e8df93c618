// Newcomer's run, item 16: `restore` replaced the store under a running server. Server A and
// server B ran on one data directory; B's exit removed the pid file, restore then succeeded while
// A still answered, and a signup A acknowledged was in neither file. The executable, as a user runs it.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { PASSWORD } from '../helpers/server';

const signup = (url: string, email: string) =>
  fetch(`${url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email, name: 'Someone', password: PASSWORD, passwordConfirm: PASSWORD } }),
  });

t.test('restore refuses while any server holds the store, whoever removed the pid file', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = path.join(dir, 'data');
  const run = (args: string[]) => runExe(exe, ['--data-dir', data, ...args], { env, cwd: dir });
  const a = await serveExe(t, exe, ['--data-dir', data, '--bcrypt-cost', '4'], { env, cwd: dir });
  t.equal((await signup(a.url, 'first@example.com')).status, 200);
  t.equal((await run(['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  t.equal((await run(['backup', '--to', path.join(dir, 'snap.sqlite')])).code, 0);

  const b = await serveExe(t, exe, ['--data-dir', data, '--bcrypt-cost', '4'], { env, cwd: dir });
  t.equal(await b.stop(), 0, 'a second server on the same store starts and stops');
  t.notOk(fs.existsSync(path.join(data, 'gatehouse.pid')), 'B removed the pid file on its way out');

  const refused = await run(['restore', '--from', path.join(dir, 'snap.sqlite')]);
  t.equal(refused.code, 3, 'A still holds the store: refused');
  t.match(refused.stderr, /a server.* is running on .*; stop it first/);

  t.equal((await signup(a.url, 'acknowledged@example.com')).status, 200, 'A goes on writing to the same store');
  t.equal(await a.stop(), 0);
  t.equal((await run(['user', 'show', 'acknowledged@example.com'])).code, 0, 'the acknowledged signup is in the store');

  const restored = await run(['restore', '--from', path.join(dir, 'snap.sqlite')]);
  t.equal(restored.code, 0, 'with no server left, restore goes ahead');
});

t.test('a server killed with SIGKILL leaves no lock behind', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = path.join(dir, 'data');
  const run = (args: string[]) => runExe(exe, ['--data-dir', data, ...args], { env, cwd: dir });
  const a = await serveExe(t, exe, ['--data-dir', data, '--bcrypt-cost', '4'], { env, cwd: dir });
  t.equal((await run(['backup', '--to', path.join(dir, 'snap.sqlite')])).code, 0);
  a.child.kill('SIGKILL');
  await new Promise((resolve) => a.child.once('exit', resolve));
  t.equal((await run(['restore', '--from', path.join(dir, 'snap.sqlite')])).code, 0, 'the kernel released the dead server’s lock');
});
