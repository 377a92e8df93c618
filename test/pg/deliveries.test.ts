// Two packaged instances on one PostgreSQL database deliver the one queue: twelve concurrent
// signups spread over both, each account.created event delivered exactly once (FOR UPDATE SKIP
// LOCKED: no message is held by two instances at once), verified by the standardwebhooks library.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { startReceiver } from '../helpers/receiver';

const PW = 'deliveries instance password 1';

t.test('two instances, twelve concurrent signups: each event delivered exactly once', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const flags = ['--bcrypt-cost', '4', '--no-rate-limits', '--public-url', 'https://id.example.test', '--webhook-allow-private', 'loopback'];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  t.equal((await pg.shell(['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  const receiver = await startReceiver(t);
  const added = await pg.shell(['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url, '--event', 'account.created']);
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
  const left = JSON.parse((await pg.shell(['--json', 'deliveries'])).stdout);
  t.same(left.deliveries, [], 'nothing pending or failed');
  await Promise.all([a.stop(), b.stop()]);
});
