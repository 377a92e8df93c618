// Two packaged instances on one PostgreSQL database push to one app's SCIM endpoint (scimmy):
// twelve concurrent signups spread over both, each person created there exactly once, and a
// disabled one replaced once with active:false. The queue's claims (FOR UPDATE SKIP LOCKED)
// hand each message to one instance.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { startScimTarget } from '../helpers/scim-target';

const PW = 'scim push instance password 1';

async function until(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

t.test('two instances push each change once', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const flags = ['--bcrypt-cost', '4', '--no-rate-limits', '--public-url', 'https://id.example.test', '--webhook-allow-private', 'loopback'];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  t.equal((await pg.shell(['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  const target = await startScimTarget(t);
  const added = await pg.shell(
    ['--json', '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', target.url, '--token-stdin', '--name', 'app'],
    {},
    target.token,
  );
  t.equal(added.code, 0, added.stderr);

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
  await until('thirteen people at the app', () => target.store.users.size === 13);
  t.equal((await pg.shell(['user', 'disable', 'u3@example.com'])).code, 0);
  await until('u3 disabled there', () => [...target.store.users.values()].some((u) => u.userName === 'u3' && u.active === false));
  // Give a duplicate, if there were one, time to arrive.
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(target.requests.filter((r) => r === 'POST /scim/v2/Users').length, 13, 'each person created once');
  t.equal(target.requests.filter((r) => r.startsWith('PUT /scim/v2/Users/')).length, 1, 'the disabled one replaced once');
  t.equal(new Set([...target.store.users.values()].map((u) => u.externalId)).size, 13, 'no duplicates');
  const left = JSON.parse((await pg.shell(['--json', 'deliveries'])).stdout);
  t.same(left.deliveries, [], 'nothing pending or failed');
  await Promise.all([a.stop(), b.stop()]);
});
