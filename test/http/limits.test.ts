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
  t.equal(stats.json.locked, 1, 'stats counts locked accounts (existing ones)');

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
