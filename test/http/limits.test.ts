// Signin lockouts and per-address limits, kept in the store.
import t from 'tap';
import { cli } from '../helpers/cli';
import { errorCode, PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';

const wrong = (s: Awaited<ReturnType<typeof startTestServer>>, email: string) => s.action('user_account', 'signin', { email, password: 'definitely wrong pw' });

t.test('10 failed signins lock the account (also for the correct password); survives a restart; unlock', async (t) => {
  const dir = tempDir(t);
  const a = await startTestServer(t, {}, dir);
  await a.signup('lee@example.com');
  for (let i = 0; i < 10; i++) t.equal((await wrong(a, 'lee@example.com')).status, 401);
  const locked = await a.action('user_account', 'signin', { email: 'lee@example.com', password: PASSWORD });
  t.equal(locked.status, 429, 'the correct password is refused while locked');
  t.equal(errorCode(locked), 'rate_limited');
  t.ok(Number(locked.headers.get('retry-after')) > 800, 'Retry-After tells how long');
  t.match(a.logs.join(''), /"event":"lockout"/);

  // An unknown email locks the same way, so a lockout says nothing about existence.
  for (let i = 0; i < 10; i++) await wrong(a, 'ghost@example.com');
  t.equal((await wrong(a, 'ghost@example.com')).status, 429);

  const stats = await cli(dir, ['--json', 'stats']);
  t.equal(stats.json.locked, 0, 'stats counts accounts locked everywhere; one address locked out of one account is not that');

  await a.server.close();
  await a.core.close();
  const b = await startTestServer(t, {}, dir);
  t.equal((await b.action('user_account', 'signin', { email: 'lee@example.com', password: PASSWORD })).status, 429, 'still locked after a restart');

  const unlock = await cli(dir, ['--json', 'user', 'unlock', 'lee@example.com']);
  t.equal(unlock.code, 0);
  t.equal(unlock.json.changed, true);
  t.ok(await b.signin('lee@example.com'), 'unlocked: the correct password works at once');
  t.equal((await wrong(b, 'lee@example.com')).status, 401, 'a success resets the count');
});

t.test('per-address limits; --no-rate-limits turns them off but not the per-account lockout', async (t) => {
  const s = await startTestServer(t, { signinFailuresPerAddress: '5', signupsPerAddress: '3' });
  t.equal((await s.signup('first@example.com')).status, 200);
  await setSignup(s, await s.signin('first@example.com'), 2097057);
  const signups = [];
  for (let i = 0; i < 3; i++) signups.push((await s.signup(`new${i}@example.com`)).status);
  t.same(signups, [200, 200, 429], 'the 4th signup attempt from one address is refused');

  for (let i = 0; i < 5; i++) t.equal((await wrong(s, `u${i}@example.com`)).status, 401);
  const r = await wrong(s, 'another@example.com');
  t.equal(r.status, 429, 'the address is over its limit');

  const open = await startTestServer(t, { signinFailuresPerAddress: '5', rateLimits: false });
  for (let i = 0; i < 8; i++) t.equal((await wrong(open, `u${i}@example.com`)).status, 401);
  await open.signup('pat@example.com');
  for (let i = 0; i < 10; i++) await wrong(open, 'pat@example.com');
  t.equal(
    (await open.action('user_account', 'signin', { email: 'pat@example.com', password: PASSWORD })).status,
    429,
    'the per-account lockout always applies',
  );
});

t.test('a wrong current password in change_password counts toward the lockout', async (t) => {
  const s = await startTestServer(t, { signinFailuresPerAccount: '3' });
  await s.signup('max@example.com');
  const token = await s.signin('max@example.com');
  for (let i = 0; i < 3; i++) {
    await s.action(
      'user_account',
      'change_password',
      { currentPassword: 'guess number ' + i, password: 'brand new password 1', passwordConfirm: 'brand new password 1' },
      token,
    );
  }
  t.equal((await s.action('user_account', 'signin', { email: 'max@example.com', password: PASSWORD })).status, 429);
});

t.test('one hostile address cannot lock the owner out from another; the ceiling across addresses still holds', async (t) => {
  const s = await startTestServer(t, { trustProxy: '1', signinFailuresPerAccount: '3', signinFailuresPerAccountTotal: '7' });
  await s.signup('own@example.com');
  const from = (address: string, password: string) =>
    s.call('POST', '/action/user_account/signin', { body: { attributes: { email: 'own@example.com', password } }, headers: { 'x-forwarded-for': address } });
  for (let i = 0; i < 3; i++) t.equal((await from('203.0.113.66', 'wrong guess ' + i)).status, 401);
  t.equal((await from('203.0.113.66', PASSWORD)).status, 429, 'the hostile address is locked for this account, even with the right password');
  t.equal((await from('198.51.100.7', PASSWORD)).status, 200, 'the owner, from elsewhere, signs in');
  // Spread guessing: every address stays under its own limit, the account-wide ceiling stops it.
  for (let i = 0; i < 4; i++) await from(`192.0.2.${i}`, 'wrong guess');
  const r = await from('198.51.100.7', PASSWORD);
  t.equal(r.status, 429, '7 failures from all addresses lock the account everywhere');
  t.match(errorCode(r), 'rate_limited');
  t.equal((await cli(s.dataDir, ['--json', 'stats'], { env: { GATEHOUSE_SIGNIN_FAILURES_PER_ACCOUNT_TOTAL: '7' } })).json.locked, 1, 'stats counts it');
  const unlock = await cli(s.dataDir, ['--json', 'user', 'unlock', 'own@example.com']);
  t.equal(unlock.json.changed, true);
  t.equal((await from('203.0.113.66', PASSWORD)).status, 200, 'unlock clears the account and every pair');
});

t.test('--trust-proxy takes the first untrusted address from the right of X-Forwarded-For', async (t) => {
  const s = await startTestServer(t, { trustProxy: '1', signinFailuresPerAddress: '6' });
  const fail = (xff: string) =>
    s.call('POST', '/action/user_account/signin', {
      body: { attributes: { email: 'nobody@example.com', password: 'wrong password' } },
      headers: { 'x-forwarded-for': xff },
    });
  // The client writes the left part; the proxy appends the address it saw.
  for (let i = 0; i < 6; i++) t.equal((await fail(`10.0.0.${i}, 203.0.113.9`)).status, 401);
  t.equal((await fail('10.0.0.99, 203.0.113.9')).status, 429, 'the sixth failure from 203.0.113.9 reached the per-address limit');
  t.equal((await fail('203.0.113.10')).status, 401, 'another client is not affected');
});

t.test('client addresses: hops and trusted networks', async (t) => {
  const { clientAddress } = await import('../../src/http/client-address');
  t.equal(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2', null), '127.0.0.1', 'no proxy trusted: the socket');
  t.equal(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2', { hops: 1 }), '2.2.2.2');
  t.equal(clientAddress('127.0.0.1', '1.1.1.1, 2.2.2.2', { hops: 2 }), '1.1.1.1');
  t.equal(clientAddress('127.0.0.1', '2.2.2.2', { hops: 3 }), '2.2.2.2', 'fewer entries than hops: the leftmost there is');
  t.equal(clientAddress('::ffff:127.0.0.1', '', { hops: 1 }), '127.0.0.1', 'no header: the socket, IPv4-mapped made plain');
  t.equal(clientAddress('127.0.0.1', 'junk, 2.2.2.2', { hops: 2 }), '2.2.2.2', 'not an address: the one the proxy wrote');
  const networks = { networks: ['10.0.0.0/8', '127.0.0.1', 'fd00::/8'] };
  t.equal(clientAddress('127.0.0.1', '6.6.6.6, 5.5.5.5, 10.1.2.3', networks), '5.5.5.5', 'skips trusted proxies from the right');
  t.equal(clientAddress('203.0.113.1', '5.5.5.5', networks), '203.0.113.1', 'an untrusted peer: its header is ignored');
  t.equal(clientAddress('fd00::1', '10.0.0.1, 10.0.0.2', networks), '10.0.0.1', 'all trusted: the leftmost');
  t.equal(clientAddress('127.0.0.1', 'x, 10.0.0.5', networks), '10.0.0.5');
});

t.test('--trust-proxy values are checked', async (t) => {
  const { loadConfig } = await import('../../src/config');
  t.same(loadConfig({ trustProxy: true }, {}).trustProxy, { hops: 1 });
  t.same(loadConfig({}, { GATEHOUSE_TRUST_PROXY: '2' }).trustProxy, { hops: 2 });
  t.same(loadConfig({ trustProxy: '10.0.0.0/8, ::1' }, {}).trustProxy, { networks: ['10.0.0.0/8', '::1'] });
  t.equal(loadConfig({}, {}).trustProxy, null);
  for (const bad of ['10.0.0.0/33', 'proxy.example.com', '10.0.0.0/8/1', '99'])
    t.throws(() => loadConfig({ trustProxy: bad }, {}), { code: 'invalid_input' }, bad);
});
