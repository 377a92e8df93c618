// Two packaged instances on one PostgreSQL database: nothing one accepts may outlive what the
// other revoked. Runs when PostgreSQL is reachable (GATEHOUSE_TEST_PG or the documented default).
import t from 'tap';
import { generate } from 'otplib';
import { onPostgres } from '../helpers/pg';

const PW = 'multi instance password 1';
type Item = { ResponseType: string; Attributes: Record<string, unknown> };

async function post(url: string, attributes: Record<string, unknown>, token?: string) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ attributes }),
  });
  return { status: res.status, body: (await res.json()) as Item[] };
}
const tokenIn = (body: Item[]) => String(body.find((i) => i.ResponseType === 'client.store.set')?.Attributes.value);
const me = async (url: string, token: string) => (await fetch(`${url}/api/user_account`, { headers: { authorization: `Bearer ${token}` } })).status;

t.test('two instances on one PostgreSQL database', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const { serve, shell } = pg;
  // Both start together: migrations run once, under the advisory lock.
  const [a, b] = await Promise.all([
    serve(['--bcrypt-cost', '4', '--signin-failures-per-account', '6', '--public-url', 'https://id.example.test']),
    serve(['--bcrypt-cost', '4', '--signin-failures-per-account', '6', '--public-url', 'https://id.example.test']),
  ]);
  t.match(a.output(), /"dialect":"postgres"/);

  t.equal((await shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  const guest = (email: string) => ({ email, name: 'G', password: PW, passwordConfirm: PW });
  t.equal((await post(`${b.url}/action/user_account/signup`, guest('early@example.com'))).status, 403, 'closed on B after bootstrap');

  // set-permission is seen by both at once.
  t.equal((await shell(['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  t.equal((await post(`${a.url}/action/user_account/signup`, guest('one@example.com'))).status, 200, 'A sees it open');
  t.equal((await post(`${b.url}/action/user_account/signup`, guest('two@example.com'))).status, 200, 'B sees it open');

  // A token issued by A works on B; a password change on A makes B refuse it on the next request.
  const onA = tokenIn((await post(`${a.url}/action/user_account/signin`, { email: 'one@example.com', password: PW })).body);
  t.equal(await me(b.url, onA), 200, "A's token works on B");
  const changed = await post(`${a.url}/action/user_account/change_password`, { currentPassword: PW, password: PW + ' new', passwordConfirm: PW + ' new' }, onA);
  t.equal(changed.status, 200);
  t.equal(await me(b.url, onA), 401, 'B refuses the old token on the very next request');
  t.equal(await me(b.url, tokenIn(changed.body)), 200, 'and accepts the fresh one');

  // 20 concurrent signups of one email spread over A and B: exactly one account.
  const racers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`${(i % 2 ? a : b).url}/action/user_account/signup`, guest('race@example.com'))));
  t.equal(racers.filter((r) => r.status === 200).length, 1, 'one wins');
  t.equal(racers.filter((r) => r.status === 409).length, 19, 'the rest get 409, never a 500');
  const stats = JSON.parse((await shell(['--json', 'stats'])).stdout);
  t.equal(stats.accounts, 4, 'admin, one, two, race');
  t.equal(stats.store.dialect, 'postgres');

  // One TOTP code used on A, then on B: the second is refused.
  const tok2 = tokenIn((await post(`${b.url}/action/user_account/signin`, { email: 'two@example.com', password: PW })).body);
  const enrol = await post(`${b.url}/action/user_account/totp_enroll`, { password: PW }, tok2);
  const secret = String(enrol.body[0].Attributes.secret);
  if ((Date.now() / 1000) % 30 > 24) await new Promise((r) => setTimeout(r, (30 - ((Date.now() / 1000) % 30) + 0.2) * 1000));
  const step = Math.floor(Date.now() / 30000);
  t.equal((await post(`${a.url}/action/user_account/totp_confirm`, { otp: await generate({ secret, epoch: (step - 1) * 30 }) }, tok2)).status, 200);
  const code = await generate({ secret, epoch: step * 30 });
  const onA2 = await post(`${a.url}/action/user_account/signin`, { email: 'two@example.com', password: PW, otp: code });
  const onB2 = await post(`${b.url}/action/user_account/signin`, { email: 'two@example.com', password: PW, otp: code });
  t.equal(onA2.status, 200, 'the code works on A');
  t.equal(onB2.status, 401, 'the same code is refused on B');

  // Failed signins spread over A and B count toward one lockout.
  for (let i = 0; i < 6; i++) await post(`${(i % 2 ? a : b).url}/action/user_account/signin`, { email: 'race@example.com', password: 'wrong password here' });
  t.equal((await post(`${a.url}/action/user_account/signin`, { email: 'race@example.com', password: PW })).status, 429, 'locked on A');
  t.equal((await post(`${b.url}/action/user_account/signin`, { email: 'race@example.com', password: PW })).status, 429, 'and on B');

  t.equal((await shell(['action', 'set-permission', 'signup', '--guest', 'off'])).code, 0);
  t.equal((await post(`${a.url}/action/user_account/signup`, guest('late1@example.com'))).status, 403, 'closed on A at once');
  t.equal((await post(`${b.url}/action/user_account/signup`, guest('late2@example.com'))).status, 403, 'closed on B at once');

  t.equal(await a.stop(), 0);
  t.equal(await b.stop(), 0);
});

t.test('an instance on PostgreSQL without --public-url warns, in one line that says what to set (hidden check 15)', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const bare = await pg.serve(['--bcrypt-cost', '4']);
  const warnings = bare
    .output()
    .split('\n')
    .filter((l) => l.includes('"public_url_unset"'));
  t.equal(warnings.length, 1, 'one line');
  t.match(warnings[0], /"level":"warn".*--public-url/);
  const code = await bare.stop();
  t.equal(code, 0, bare.output().slice(-600));
  const set = await pg.serve(['--bcrypt-cost', '4', '--public-url', 'https://id.example.com']);
  t.notMatch(set.output(), /public_url_unset/, 'no warning once it is set');
  await set.stop();
});
