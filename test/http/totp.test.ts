// TOTP second factor: enrolment, the ±1 step window, no replay, lockout, recovery codes.
import t from 'tap';
import { generate } from 'otplib';
import { errorCode, PASSWORD, setSignup, startTestServer, tokenOf, withAdmin } from '../helpers/server';
import { manualClock } from '../helpers/clock';

const STEP = 30;
const code = (secret: string, step: number) => generate({ secret, epoch: step * STEP });
/** The server's clock, held at the start of a step, so a test's steps never roll over under it. */
const stepClock = () => manualClock(Math.floor(Date.now() / 1000 / STEP) * STEP * 1000 + 1000);

async function enrolled(t: Parameters<typeof startTestServer>[0], flags = {}) {
  const clock = stepClock();
  const nowStep = () => Math.floor(clock.now() / 1000 / STEP);
  const s = await startTestServer(t, flags, undefined, { clock });
  await s.signup('admin@example.com');
  const admin = await s.signin('admin@example.com');
  await setSignup(s, admin, 2097057);
  await s.signup('kim@example.com');
  let token = await s.signin('kim@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token);
  t.equal(enrol.status, 200, 'enrolled');
  const { secret, uri } = enrol.body[0].Attributes;
  const t0 = nowStep();
  const confirm = await s.action('user_account', 'totp_confirm', { otp: await code(secret, t0 - 1) }, token);
  t.equal(confirm.status, 200, 'confirmed with the previous step');
  token = tokenOf(confirm);
  const codes: string[] = confirm.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.recovery_codes').Attributes.codes;
  return { s, secret, uri, t0, codes, token, admin };
}

const signin = (s: Awaited<ReturnType<typeof enrolled>>['s'], extra: Record<string, unknown> = {}) =>
  s.action('user_account', 'signin', { email: 'kim@example.com', password: PASSWORD, ...extra });

t.test('enrol → confirm → signin needs a code; steps t-2…t+2; no replay', async (t) => {
  const { s, secret, uri, t0, codes, token } = await enrolled(t);
  t.match(secret, /^[A-Z2-7]{32}$/, '160-bit base32 secret');
  t.match(uri, /^otpauth:\/\/totp\/Gatehouse:kim%40example\.com\?/);
  t.match(uri, /issuer=Gatehouse/);
  t.equal(codes.length, 10);
  t.equal(new Set(codes).size, 10);
  t.equal((await s.call('GET', '/api/user_account', { token })).status, 200, 'the token from confirm works');
  const row = await s.db('user_account').where({ email_key: 'kim@example.com' }).first();
  t.notOk(JSON.stringify((await s.call('GET', '/api/user_account', { token })).body).includes(secret), 'the secret is never serialized');
  t.equal(row.totp_enabled ? 1 : 0, 1);

  const none = await signin(s);
  t.equal(none.status, 401);
  t.equal(errorCode(none), 'otp_required');
  t.notOk(
    none.body.some((i: { ResponseType: string }) => i.ResponseType === 'client.store.set'),
    'no token without the code',
  );
  const wrongPw = await signin(s, { password: 'not the password', otp: await code(secret, t0) });
  t.equal(errorCode(wrongPw), 'invalid_credentials', 'the password is checked first');

  t.equal(errorCode(await signin(s, { otp: await code(secret, t0 - 2) })), 'otp_invalid', 't-2: outside the window');
  t.equal(errorCode(await signin(s, { otp: await code(secret, t0 + 2) })), 'otp_invalid', 't+2: outside the window');
  t.equal((await signin(s, { otp: await code(secret, t0) })).status, 200, 't: accepted');
  t.equal(errorCode(await signin(s, { otp: await code(secret, t0) })), 'otp_invalid', 't again: replay refused');
  t.equal(errorCode(await signin(s, { otp: await code(secret, t0 - 1) })), 'otp_invalid', 't-1 after t: refused');
  t.equal((await signin(s, { otp: await code(secret, t0 + 1) })).status, 200, 't+1: accepted');
  t.match(s.logs.join(''), /"event":"totp_replay"/);
  t.notOk(s.logs.join('').includes(secret), 'the secret never reaches the log');
});

t.test('10 parallel signins with one fresh code: exactly one token', async (t) => {
  const { s, secret, t0 } = await enrolled(t);
  const otp = await code(secret, t0);
  const replies = await Promise.all(Array.from({ length: 10 }, () => signin(s, { otp })));
  t.equal(replies.filter((r) => r.status === 200).length, 1);
  // The other nine are refused: as a replay, or (once five have failed) by the TOTP lockout.
  t.equal(replies.filter((r) => ['otp_invalid', 'rate_limited'].includes(errorCode(r) ?? '')).length, 9);
});

t.test('5 failed codes lock the second factor, even for a correct code', async (t) => {
  const { s, secret, t0 } = await enrolled(t);
  for (let i = 0; i < 5; i++) t.equal(errorCode(await signin(s, { otp: '000000' })), 'otp_invalid');
  const locked = await signin(s, { otp: await code(secret, t0) });
  t.equal(locked.status, 429);
  t.equal(errorCode(locked), 'rate_limited');
  t.ok(Number(locked.headers.get('retry-after')) > 0);
  t.match(s.logs.join(''), /"event":"lockout".*"kind":"totp"/);
});

t.test('a recovery code works once', async (t) => {
  const { s, codes } = await enrolled(t);
  t.equal((await signin(s, { recovery_code: codes[3].toUpperCase() })).status, 200);
  t.equal(errorCode(await signin(s, { recovery_code: codes[3] })), 'otp_invalid', 'used once only');
  t.equal((await signin(s, { recovery_code: 'abcd-efgh-jkmn' })).status, 401);
  // One box for both: a recovery code sent as `otp` (not six digits) is tried as a recovery code, once.
  t.equal((await signin(s, { otp: codes[4] })).status, 200, 'a recovery code in otp');
  t.equal(errorCode(await signin(s, { otp: codes[4] })), 'otp_invalid', 'and used once only');
  const stored = await s.db('recovery_code').select('code_hash');
  t.notOk(
    stored.some((r: { code_hash: string }) => codes.includes(r.code_hash)),
    'stored hashed',
  );
});

t.test('totp_disable needs the password and a code; permissions are unchanged by TOTP', async (t) => {
  const { s, secret, t0, token } = await enrolled(t);
  const list = await s.call('GET', '/api/action?filter=signup', { token: await s.signin('admin@example.com') });
  const id = list.body.data[0].id;
  const patch = await s.call('PATCH', `/api/action/${id}`, { token, body: { data: { type: 'action', id, attributes: { permission: 0 } }, meta: {} } });
  t.ok([403, 404].includes(patch.status), 'TOTP strengthens signin only: still no right to change actions');

  t.equal((await s.action('user_account', 'totp_disable', { password: PASSWORD }, token)).status, 401, 'a code is needed');
  t.equal(
    errorCode(await s.action('user_account', 'totp_disable', { password: 'wrong password 12', otp: await code(secret, t0) }, token)),
    'invalid_credentials',
  );
  const off = await s.action('user_account', 'totp_disable', { password: PASSWORD, otp: await code(secret, t0) }, token);
  t.equal(off.status, 200);
  t.equal((await s.call('GET', '/api/user_account', { token })).status, 401, 'disabling TOTP ends earlier sessions');
  t.ok(await s.signin('kim@example.com'), 'signin needs no code any more');
  t.equal(
    await s
      .db('recovery_code')
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    0,
    'recovery codes are gone',
  );
});

t.test('a password reset does not switch TOTP off; the operator can', async (t) => {
  const { s, secret, t0 } = await enrolled(t);
  const db = s.db;
  const account = await db('user_account').where({ email_key: 'kim@example.com' }).first();
  const { issueToken } = await import('../../src/store/account-tokens');
  const { openTestStore } = await import('../helpers/db');
  const token = await issueToken((await openTestStore(t, s.config)).root, account.id, 'reset_password', 'kim@example.com', 600);
  t.equal((await s.action('user_account', 'reset_password', { token, password: 'after reset pass 1', passwordConfirm: 'after reset pass 1' })).status, 200);
  t.equal(errorCode(await s.action('user_account', 'signin', { email: 'kim@example.com', password: 'after reset pass 1' })), 'otp_required');
  t.equal((await s.action('user_account', 'signin', { email: 'kim@example.com', password: 'after reset pass 1', otp: await code(secret, t0) })).status, 200);
  const { cli } = await import('../helpers/cli');
  const r = await cli(s.dataDir, ['--json', 'user', 'totp-reset', 'kim@example.com']);
  t.equal(r.code, 0, r.err);
  t.equal(r.json.changed, true);
  t.equal(
    (await s.action('user_account', 'signin', { email: 'kim@example.com', password: 'after reset pass 1' })).status,
    200,
    'no code needed after totp-reset',
  );
});

t.test('confirm needs a current code and a pending enrolment', async (t) => {
  const clock = stepClock();
  const nowStep = () => Math.floor(clock.now() / 1000 / STEP);
  const s = await withAdmin(t, {}, { clock });
  t.equal((await s.action('user_account', 'totp_confirm', { otp: '123456' }, s.adminToken)).status, 400, 'nothing to confirm');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, s.adminToken);
  const secret = enrol.body[0].Attributes.secret;
  t.equal(errorCode(await s.action('user_account', 'totp_confirm', { otp: await code(secret, nowStep() - 3) }, s.adminToken)), 'otp_invalid');
  t.equal(
    errorCode(await s.action('user_account', 'signin', { email: 'admin@example.com', password: PASSWORD })),
    undefined,
    'pending enrolment: signin needs no code yet',
  );
  t.equal((await s.action('user_account', 'totp_enroll', { password: 'wrong password 12' }, s.adminToken)).status, 401);
});
