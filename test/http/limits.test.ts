// Signin lockouts and per-address limits, kept in the store.
import t from 'tap';
import { cli } from '../helpers/cli';
import { errorCode, PASSWORD, setSignup, startTestServer, tempDir } from '../helpers/server';
import { manualClock } from '../helpers/clock';
import { startSmtp, tokenIn } from '../helpers/smtp';

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

t.test('one hostile address cannot lock the owner out from another; past the ceiling, unfamiliar addresses wait longer and longer', async (t) => {
  // Attack review, item 7: 100 failures from 10 addresses locked the owner out everywhere for 15 minutes.
  const clock = manualClock();
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { trustProxy: '1', signinFailuresPerAccount: '3', signinFailuresPerAccountTotal: '7', smtpUrl: smtp.url }, undefined, {
    clock,
  });
  await s.signup('own@example.com');
  const from = (address: string, password: string) =>
    s.call('POST', '/action/user_account/signin', { body: { attributes: { email: 'own@example.com', password } }, headers: { 'x-forwarded-for': address } });
  for (let i = 0; i < 3; i++) t.equal((await from('203.0.113.66', 'wrong guess ' + i)).status, 401);
  t.equal((await from('203.0.113.66', PASSWORD)).status, 429, 'the hostile address is locked for this account, even with the right password');
  t.equal((await from('198.51.100.7', PASSWORD)).status, 200, 'the owner, from elsewhere, signs in (and that address becomes familiar)');

  // Spread guessing: every address stays under its own limit; the account-wide ceiling (7) is reached.
  for (let i = 0; i < 4; i++) await from(`192.0.2.${i}`, 'wrong guess');
  t.equal((await from('198.51.100.7', PASSWORD)).status, 200, 'the owner’s familiar address is not held back');
  const held = await from('192.0.2.77', PASSWORD);
  t.equal(held.status, 429, 'an unfamiliar address waits, even with the right password');
  t.equal(errorCode(held), 'rate_limited');
  t.equal(held.headers.get('retry-after'), '1', 'one second at the ceiling');
  // Every further failure doubles the wait.
  clock.advance(1000);
  t.equal((await from('192.0.2.78', 'wrong guess')).status, 401, 'after the wait, one more try');
  t.equal((await from('192.0.2.79', 'wrong guess')).headers.get('retry-after'), '2', 'then two seconds');
  clock.advance(2000);
  await from('192.0.2.80', 'wrong guess');
  t.equal((await from('192.0.2.81', PASSWORD)).headers.get('retry-after'), '4', 'then four');
  t.equal((await cli(s.dataDir, ['--json', 'stats'], { env: { GATEHOUSE_SIGNIN_FAILURES_PER_ACCOUNT_TOTAL: '7' } })).json.locked, 1, 'stats counts it');

  // The owner was mailed a link that lifts the wait, once.
  await s.core.settle();
  const mail = await smtp.next('own@example.com', 2); // after the verification mail of the signup
  t.match(mail.raw, /Subject: Someone is trying to sign in to your account/);
  t.match(mail.text, /\/unlock#token=/);
  const lifted = await s.call('POST', '/action/user_account/unlock_signin', {
    body: { attributes: { token: tokenIn(mail) } },
    headers: { 'x-forwarded-for': '192.0.2.200' },
  });
  t.equal(lifted.status, 200, 'the link works');
  t.equal((await from('192.0.2.200', PASSWORD)).status, 200, 'and the owner signs in from where the link was opened');
  t.equal((await from('203.0.113.66', PASSWORD)).status, 200, 'every pair was cleared too');
  const again = await s.call('POST', '/action/user_account/unlock_signin', { body: { attributes: { token: tokenIn(mail) } } });
  t.equal(again.status, 400, 'once');
});

t.test('IPv6 addresses count by their /64', async (t) => {
  const s = await startTestServer(t, { trustProxy: '1', signinFailuresPerAccount: '3' });
  await s.signup('six@example.com');
  const from = (address: string, password: string) =>
    s.call('POST', '/action/user_account/signin', { body: { attributes: { email: 'six@example.com', password } }, headers: { 'x-forwarded-for': address } });
  // One host holds a whole /64: a new address per guess is no way around the pair limit.
  for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff']) t.equal((await from(address, 'wrong guess')).status, 401);
  t.equal((await from('2001:db8:1:2:aaaa::9', PASSWORD)).status, 429, 'the /64 is locked for this account');
  t.equal((await from('2001:db8:1:3::1', PASSWORD)).status, 200, 'the next /64 is another place');
  const { addressGroup } = await import('../../src/runtime/limiter');
  t.equal(addressGroup('2001:0db8:0001:0002:0000:0000:0000:0001'), '2001:db8:1:2::/64');
  t.equal(addressGroup('::ffff:192.0.2.1'), '192.0.2.1');
  t.equal(addressGroup('::1'), '0:0:0:0::/64');
  t.equal(addressGroup('192.0.2.1'), '192.0.2.1');
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

t.test('a browser that signed in before (the pages’ device cookie) is not held back by failures elsewhere', async (t) => {
  const s = await startTestServer(t, { trustProxy: '1', signinFailuresPerAccountTotal: '4' });
  await s.signup('dev@example.com');
  const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(';')[0]);
  const start = await fetch(`${s.url}/signin`);
  const jar = cookiesOf(start);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await start.text())![1];
  t.ok(
    jar.some((c) => c.startsWith('gatehouse_device=')),
    'the sign-in page gives the browser a device cookie',
  );
  const pageSignin = (address: string, cookies: string[]) =>
    fetch(`${s.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; '), 'x-forwarded-for': address },
      body: new URLSearchParams({ csrf, email: 'dev@example.com', password: PASSWORD }).toString(),
    });
  t.equal((await pageSignin('198.51.100.1', jar)).status, 303, 'signed in once from this browser');
  for (let i = 0; i < 4; i++)
    await s.call('POST', '/action/user_account/signin', {
      body: { attributes: { email: 'dev@example.com', password: 'wrong guess' } },
      headers: { 'x-forwarded-for': `192.0.2.${i}` },
    });
  const elsewhere = jar.filter((c) => !c.startsWith('gatehouse_device='));
  t.equal((await pageSignin('203.0.113.5', elsewhere)).status, 429, 'a new place without the device waits');
  t.equal((await pageSignin('203.0.113.6', jar)).status, 303, 'the same browser on a new network signs in');
});

t.test('every way of replacing a password clears the lockouts of the old one (set-password too)', async (t) => {
  const s = await startTestServer(t, { signinFailuresPerAccount: '3' });
  await s.signup('pat@example.com');
  for (let i = 0; i < 3; i++) await wrong(s, 'pat@example.com');
  t.equal((await s.action('user_account', 'signin', { email: 'pat@example.com', password: PASSWORD })).status, 429, 'locked out');
  const set = await cli(s.dataDir, ['user', 'set-password', 'pat@example.com', '--password-stdin'], { stdin: 'a brand new pass phrase' });
  t.equal(set.code, 0, set.err);
  t.equal(
    (await s.action('user_account', 'signin', { email: 'pat@example.com', password: 'a brand new pass phrase' })).status,
    200,
    'the new password signs in at once',
  );
  const events = ((await cli(s.dataDir, ['--json', 'audit'])).json.events as Array<{ event: string }>).map((e) => e.event);
  t.ok(events.includes('password_set'), 'audited');
});

t.test('familiar places are forgotten 90 days after the last signin from them (prune)', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  await s.signup('old@example.com');
  await s.signin('old@example.com');
  // The address (the sign-in limits' familiar place) and the browser and place (the new-sign-in mail's).
  const remembered = (await s.db('known_signin')).length;
  t.ok(remembered >= 1, `the address is remembered (${remembered} rows)`);
  await s.core.prune();
  t.equal((await s.db('known_signin')).length, remembered, 'kept while recent');
  clock.advance(91 * 24 * 3600 * 1000);
  await s.core.prune();
  t.equal((await s.db('known_signin')).length, 0, 'forgotten after 90 days');
});
