// An outside attack: the TOTP failure limit (5 wrong codes per account per window) was read,
// then the code checked, then the failure counted; someone with the password opened many code
// steps and sent their wrong codes at once, and 52-60 of 60 were checked. Now each attempt is
// taken from the limit by one conditional write before its code is checked: of codes sent at
// once, at most five are checked and the rest are refused (429), a right code too while it lasts.
// On the sign-in page's code step and on the signin action; with two instances over PostgreSQL
// in test/pg/totp-limit-instances.test.ts.
import t from 'tap';
import { browser } from '../helpers/amr-upstream';
import { manualClock, totpAt } from '../helpers/clock';
import { errorCode, PASSWORD, setSignup, type TestServer, withAdmin } from '../helpers/server';

const LIMIT = 5;

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 1000);
  // Per-address limits off: the account's own TOTP limit always applies, and it is what is tested.
  const s = await withAdmin(t, { rateLimits: false }, { clock });
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await s.signup('ada@example.com')).status, 200);
  const token = await s.signin('ada@example.com');
  const secret: string = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token)).body[0].Attributes.secret;
  const on = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token);
  t.equal(on.status, 200, 'Ada turns TOTP on');
  const codes = (on.body as Array<{ Attributes: { codes?: string[] } }>).find((i) => i.Attributes.codes)!.Attributes.codes!;
  clock.advance(30_000);
  return { s, clock, secret, codes };
}

/** A browser that sent Ada's right password: it holds a code step. */
async function stepOpened(t: Parameters<typeof withAdmin>[0], s: TestServer) {
  const b = browser(s);
  await b.go('/signin');
  const page = await b.form('/signin', { email: 'ada@example.com', password: PASSWORD });
  const step = /name="step" value="([^"]+)"/.exec(page.text)?.[1];
  if (!step) t.fail('no code step');
  return { b, step: step! };
}

/** A wrong six-digit code other than the right one, different for each `i`. */
const wrongCode = (right: string, i: number) => {
  const c = String(100000 + i * 7919).slice(-6);
  return c === right ? String((Number(c) + 1) % 1_000_000).padStart(6, '0') : c;
};

t.test('code steps opened by the password, their wrong codes sent at once: five checked, the rest 429', async (t) => {
  const { s, clock, secret } = await setUp(t);
  const right = await totpAt(secret, clock);
  const steps = await Promise.all(Array.from({ length: 30 }, () => stepOpened(t, s)));
  const answers = await Promise.all(steps.map(({ b, step }, i) => b.form('/signin/code', { step, otp: wrongCode(right, i) })));
  const statuses = answers.map((a) => a.status);
  t.equal(statuses.filter((x) => x === 401).length, LIMIT, 'exactly five codes checked (wrong)');
  t.equal(statuses.filter((x) => x === 429).length, 30 - LIMIT, 'the others refused before their code was checked');
  // The right code, on a fresh step, while the limit holds: refused.
  const fresh = await stepOpened(t, s);
  const locked = await fresh.b.form('/signin/code', { step: fresh.step, otp: right });
  t.equal(locked.status, 429, 'a right code is refused while locked');
  t.match(s.logs.join(''), /"event":"lockout".*"kind":"totp"/, 'the lockout is audited');
  t.equal((s.logs.join('').match(/"event":"lockout"[^\n]*"kind":"totp"/g) ?? []).length, 1, 'once');
});

t.test('the signin action with wrong codes (and recovery codes) at once: five checked, the rest 429', async (t) => {
  const { s, clock, secret } = await setUp(t);
  const right = await totpAt(secret, clock);
  const replies = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      s.action('user_account', 'signin', {
        email: 'ada@example.com',
        password: PASSWORD,
        ...(i % 3 === 0 ? { recovery_code: `abcd-efgh-${String(i).padStart(4, 'x')}` } : { otp: wrongCode(right, i) }),
      }),
    ),
  );
  t.equal(replies.filter((r) => errorCode(r) === 'otp_invalid').length, LIMIT, 'exactly five checked');
  t.equal(replies.filter((r) => r.status === 429 && errorCode(r) === 'rate_limited').length, 30 - LIMIT, 'the rest 429');
  const locked = await s.action('user_account', 'signin', { email: 'ada@example.com', password: PASSWORD, otp: right });
  t.equal(locked.status, 429, 'a right code is refused while locked');
  clock.advance(s.config.limitWindow * 1000 + 1000);
  t.equal(
    (await s.action('user_account', 'signin', { email: 'ada@example.com', password: PASSWORD, otp: await totpAt(secret, clock) })).status,
    200,
    'the next window: the right code signs in',
  );
});

t.test('a right code does not use up an attempt: only failures count, as before', async (t) => {
  const { s, clock, secret, codes } = await setUp(t);
  const signin = (extra: Record<string, string>) => s.action('user_account', 'signin', { email: 'ada@example.com', password: PASSWORD, ...extra });
  for (let i = 0; i < LIMIT - 1; i++)
    t.equal(errorCode(await signin({ otp: '000000' === (await totpAt(secret, clock)) ? '000001' : '000000' })), 'otp_invalid');
  for (let i = 0; i < 3; i++) {
    t.equal((await signin({ otp: await totpAt(secret, clock) })).status, 200, `right code ${i + 1}`);
    clock.advance(30_000);
  }
  t.equal((await signin({ recovery_code: codes[0]! })).status, 200, 'a recovery code');
  t.equal(
    errorCode(await signin({ otp: '000000' === (await totpAt(secret, clock)) ? '000001' : '000000' })),
    'otp_invalid',
    'the fifth failure is still checked',
  );
  t.equal((await signin({ otp: await totpAt(secret, clock) })).status, 429, 'then locked');
});
