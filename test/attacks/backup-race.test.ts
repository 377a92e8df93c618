// Attack review, item 6: `backup --to` into a folder other users can write. The partial file was
// created, unlinked, then written by VACUUM INTO; a local user who planted a file of their own at
// that name in the gap read the whole snapshot (signing keys, client secrets) and owned it.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir } from '../helpers/server';

t.test('a planted file never receives the snapshot: it is written inside a fresh 0700 directory', async (t) => {
  const data = tempDir(t);
  const s = await startTestServer(t, { db: '' }, data);
  await s.signup('admin@example.com');
  const shared = tempDir(t, 'gatehouse-shared-');
  fs.chmodSync(shared, 0o1777); // like /tmp: anyone may create files here

  // The attacker watches the folder and plants an empty, world-readable file at every new name.
  const planted: string[] = [];
  const seen: Array<{ name: string; directory: boolean; mode: number }> = [];
  const watcher = fs.watch(shared, (_event, name) => {
    if (!name || name === 'snap.sqlite') return;
    const at = path.join(shared, name);
    const stat = fs.statSync(at, { throwIfNoEntry: false });
    if (stat) seen.push({ name, directory: stat.isDirectory(), mode: stat.mode & 0o777 });
    try {
      fs.writeFileSync(at, '', { flag: 'wx', mode: 0o666 });
      planted.push(at);
    } catch {
      // the name is taken (a directory, or our backup's file): nothing planted there
    }
  });
  t.teardown(() => watcher.close());

  const r = await cli(data, ['--db', '', 'backup', '--to', path.join(shared, 'snap.sqlite')]);
  t.equal(r.code, 0, r.err);
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (const file of planted) {
    const content = fs.readFileSync(file);
    t.equal(content.length, 0, `the planted ${path.basename(file)} holds nothing of the store`);
  }
  t.ok(
    seen.some((e) => e.directory && e.mode === 0o700),
    'the backup worked in a 0700 directory',
  );
  t.notOk(
    seen.some((e) => !e.directory && e.name !== 'snap.sqlite' && !planted.includes(path.join(shared, e.name))),
    'no file of ours appeared in the shared folder but the backup',
  );
  t.equal(fs.statSync(path.join(shared, 'snap.sqlite')).mode & 0o777, 0o600);
  t.same(
    fs.readdirSync(shared).filter((n) => !planted.includes(path.join(shared, n))),
    ['snap.sqlite'],
    'nothing left but the backup',
  );
});
