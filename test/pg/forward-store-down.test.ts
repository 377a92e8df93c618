// Forward authentication when the store goes away (PostgreSQL dropped under a running server):
// proxies get 503, the one failure they should see as such, never a 500 or a pass.
import t from 'tap';
import pg from 'pg';
import { cli } from '../helpers/cli';
import { freshDatabase, pgReachable, PG_ADMIN_URL } from '../helpers/pg';
import { startTestServer } from '../helpers/server';

t.test('the store down: 503 from /auth/forward and /auth/request', async (t) => {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  const db = await freshDatabase(t);
  const s = await startTestServer(t, { db, trustProxy: '127.0.0.1', busyTimeout: '500' });
  await s.signup('admin@example.com');
  const token = await s.signin('admin@example.com');
  await cli(s.dataDir, ['--db', db, 'app', 'add', '--host', 'app.example.test']);
  const ask = () => s.call('GET', '/auth/request', { token, headers: { 'x-original-url': 'http://app.example.test/', 'x-original-method': 'GET' } });
  t.equal((await ask()).status, 200, 'up: allowed');

  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE ${new URL(db).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
  for (let i = 0; i < 3; i++) {
    const r = await ask();
    t.equal(r.status, 503, `down: 503 (try ${i + 1}), got ${r.status} ${r.text.slice(0, 200)}`);
    t.equal(r.headers.get('retry-after'), '2');
  }
});
