// Shell commands while the server keeps writing (tokens refreshed, say): on SQLite a transaction
// takes the write lock at its start and waits its turn, instead of failing busy because the server
// committed between its first read and its first write (an outside review saw half of the
// set-password commands fail with "the store is busy"; group create failed every time).
import t from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer } from '../helpers/server';

t.test('set-password and group commands succeed while another connection commits all the time', async (t) => {
  const s = await startTestServer(t);
  await s.signup('ada@example.com');
  let stop = false;
  let commits = 0;
  // Another connection to the same store, committing small writes back to back.
  const writer = (async () => {
    for (let i = 0; !stop; i++) {
      await s.db('oidc_payload').insert({ model: 'AccessToken', id: `busy-${i}`, payload: '{}' });
      commits++;
    }
  })();
  try {
    for (let i = 0; i < 6; i++) {
      const r = await cli(s.dataDir, ['user', 'set-password', 'ada@example.com', '--password-stdin'], { stdin: `a new password number ${i}` });
      t.equal(r.code, 0, `set-password ${i + 1}: ${r.err.trim() || 'ok'}`);
    }
    for (const args of [
      ['group', 'create', 'staff'],
      ['group', 'add', 'staff', 'ada@example.com'],
      ['group', 'delete', 'staff'],
    ]) {
      const r = await cli(s.dataDir, args);
      t.equal(r.code, 0, `${args.join(' ')}: ${r.err.trim() || 'ok'}`);
    }
  } finally {
    stop = true;
    await writer;
  }
  t.ok(commits > 10, `the other connection committed meanwhile (${commits})`);
  t.equal((await s.signin('ada@example.com', 'a new password number 5')).length > 0, true, 'the last password signs in');
});
