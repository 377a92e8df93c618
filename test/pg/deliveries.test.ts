// Two packaged instances on one PostgreSQL database deliver the one queue: twelve concurrent
// signups spread over both, each account.created event delivered exactly once (FOR UPDATE SKIP
// LOCKED: no message is held by two instances at once), verified by the standardwebhooks library.
import t from 'tap';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { freshDatabase, pgReachable } from '../helpers/pg';
import { startReceiver } from '../helpers/receiver';

const PW = 'deliveries instance password 1';

t.test('two instances, twelve concurrent signups: each event delivered exactly once', async (t) => {
  if (!(await pgReachable())) {
    t.fail('PostgreSQL is not reachable: set GATEHOUSE_TEST_PG or start it (.ci/run does)');
    return;
  }
  const db = await freshDatabase(t);
  const { dir, exe, env } = exeFolder(t);
  const pgEnv = { ...env, GATEHOUSE_DB: db };
  const flags = ['--bcrypt-cost', '4', '--no-rate-limits', '--public-url', 'https://id.example.test'];
  const [a, b] = await Promise.all([serveExe(t, exe, flags, { env: pgEnv, cwd: dir }), serveExe(t, exe, flags, { env: pgEnv, cwd: dir })]);
  t.equal((await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { env: { ...pgEnv, PW }, cwd: dir })).code, 0);
  t.equal((await runExe(exe, ['action', 'set-permission', 'signup', '--guest', 'on'], { env: pgEnv, cwd: dir })).code, 0);
  const receiver = await startReceiver(t);
  const added = await runExe(exe, ['--json', 'webhook', 'add', '--url', receiver.url, '--event', 'account.created'], { env: pgEnv, cwd: dir });
  t.equal(added.code, 0, added.stderr);
  receiver.secret = JSON.parse(added.stdout).secret;

  const signups = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      fetch(`${(i % 2 ? a : b).url}/action/user_account/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes: { email: `u${i}@example.com`, name: `U${i}`, password: PW, passwordConfirm: PW } }),
      }).then((r) => r.status),
    ),
  );
  t.same(signups, Array(12).fill(200), 'twelve accounts');
  await receiver.next(12, 20_000);
  // Give a duplicate, if there were one, time to arrive.
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(receiver.received.length, 12, 'twelve deliveries, no more');
  t.equal(new Set(receiver.received.map((r) => r.id)).size, 12, 'each message once');
  t.ok(
    receiver.received.every((r) => r.verified?.type === 'account.created'),
    'every one verified',
  );
  const emails = receiver.received.map((r) => r.verified?.data.account.email).sort();
  t.same(emails, Array.from({ length: 12 }, (_, i) => `u${i}@example.com`).sort());
  const left = JSON.parse((await runExe(exe, ['--json', 'deliveries'], { env: pgEnv, cwd: dir })).stdout);
  t.same(left.deliveries, [], 'nothing pending or failed');
  await Promise.all([a.stop(), b.stop()]);
});
