// Moving from SQLite to PostgreSQL: `gatehouse migrate-store` copies every account, group,
// permission and secret; the new store serves the same accounts, tokens and second factors.
import t from 'tap';
import { cli } from '../helpers/cli';
import { freshDatabase, pgReachable } from '../helpers/pg';
import { manualClock, totpAt } from '../helpers/clock';
import { PASSWORD, setSignup, startTestServer, tempDir, tokenOf } from '../helpers/server';

t.test('copy a store into a new PostgreSQL database and serve from it', async (t) => {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  await s.signup('kim@example.com');
  const kim = await s.signin('kim@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, kim);
  const secret = enrol.body[0].Attributes.secret;
  const confirmed = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, kim);
  t.equal(confirmed.status, 200);
  const kimToken = tokenOf(confirmed);
  await s.call('POST', '/api/usergroup', { token: admin, body: { data: { type: 'usergroup', attributes: { name: 'editors' } } } });

  const target = await freshDatabase(t);
  const r = await cli(s.dataDir, ['--json', 'migrate-store', '--to', target]);
  t.equal(r.code, 0, r.err);
  const copied = Object.fromEntries(r.json.tables.map((x: { table: string; source: number; target: number }) => [x.table, x]));
  t.equal(copied.user_account.target, 2);
  for (const x of r.json.tables) t.equal(x.target, x.source, `${x.table}: ${x.source} rows copied`);
  t.notMatch(r.out, /@127\.0\.0\.1:5432\/.*password/i);

  const again = await cli(s.dataDir, ['migrate-store', '--to', target]);
  t.equal(again.code, 3, 'a target that holds accounts is refused');

  // The same server moved to a new store keeps its public URL (the tokens' issuer).
  const p = await startTestServer(t, { db: target, publicUrl: s.config.publicUrl }, tempDir(t), { clock });
  clock.advance(30_000);
  t.equal(
    (await p.call('GET', '/api/user_account', { token: kimToken })).status,
    200,
    'tokens issued before the move still work (same secret, same auth_version)',
  );
  const noCode = await p.action('user_account', 'signin', { email: 'kim@example.com', password: PASSWORD });
  t.equal(noCode.status, 401, 'the second factor came along');
  const withCode = await p.action('user_account', 'signin', {
    email: 'kim@example.com',
    password: PASSWORD,
    otp: await totpAt(secret, clock),
  });
  t.equal(withCode.status, 200);
  const groups = await p.call('GET', '/api/usergroup?filter=editors', { token: await p.signin('admin@example.com') });
  t.equal(groups.body.meta.total, 1, 'groups and permissions came along');
  t.equal((await p.signup('new@example.com')).status, 200, 'signup state came along (open), and new rows get fresh ids');
  t.equal(p.core.dialect, 'postgres');
});
