// The sign-in page's code step (issue 73). A newcomer found the TOTP step on /signin showing a red
// error box that asked for the code and the password again. Now a right password for an account
// with TOTP leads to a page that asks for the code alone, with no error; the core holds the
// password's proof for that browser, for five minutes, and the code finishes it through the one
// sign-in routine. What the held step must not become: a way around the password (none without
// the right one, the same answers as before for a wrong one), portable (another browser cannot
// finish it), lasting (it expires, and ends with a password change), or reusable (of two codes
// sent at once, one signs in).
import t from 'tap';
import { browser } from '../helpers/amr-upstream';
import { manualClock, totpAt } from '../helpers/clock';
import { countRows, PASSWORD, setSignup, type TestServer, withAdmin } from '../helpers/server';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  // The clock held at the start of a TOTP step: each code below is for a step of its own.
  const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 1000);
  const s = await withAdmin(t, { rateLimits: false }, { clock });
  await setSignup(s, s.adminToken, 2097057);
  for (const email of ['ada@example.com', 'bob@example.com']) t.equal((await s.signup(email)).status, 200);
  const token = await s.signin('ada@example.com');
  const secret: string = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token)).body[0].Attributes.secret;
  const on = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token);
  t.equal(on.status, 200, 'Ada turns TOTP on');
  const codes = (on.body as Array<{ Attributes: { codes?: string[] } }>).find((i) => i.Attributes.codes)!.Attributes.codes!;
  clock.advance(30_000);
  return { s, clock, secret, codes };
}

/** A browser at the sign-in page, its password sent: the page it gets, and the step's handle if it asks for the code. */
async function password(s: TestServer, email: string, pw = PASSWORD) {
  const b = browser(s);
  await b.go('/signin');
  const page = await b.form('/signin', { email, password: pw });
  return { b, page, step: /name="step" value="([^"]+)"/.exec(page.text)?.[1] };
}

const sessions = (s: TestServer) => countRows(s, 'session');

t.test('a right password asks for the code alone, without an error; the code signs in', async (t) => {
  const { s, clock, secret } = await setUp(t);
  const { b, page, step } = await password(s, 'ada@example.com');
  t.equal(page.status, 200, 'the code step is a page, not a refusal');
  t.notMatch(page.text, /role="alert"/, 'no error box');
  t.notMatch(page.text, /name="password"/, 'the password is not asked again');
  t.match(page.text, /name="otp"/, 'the code is asked');
  t.ok(step, 'the step is named by a handle on the page');
  t.notMatch(page.text, new RegExp(PASSWORD), 'the password is not on the page');
  const before = await sessions(s);
  const done = await b.form('/signin/code', { step: step!, otp: await totpAt(secret, clock) });
  t.equal(done.status, 303);
  t.equal(done.location, '/account');
  t.equal(await sessions(s), before + 1, 'one session');
  t.ok(b.pageToken(), 'signed in on this browser');
});

t.test('no step without the right password: the same refusals as before', async (t) => {
  const { s } = await setUp(t);
  const wrong = await password(s, 'ada@example.com', 'not the password');
  const unknown = await password(s, 'nobody@example.com', 'not the password');
  for (const [what, r] of [
    ['a wrong password', wrong],
    ['an unknown address', unknown],
  ] as const) {
    t.equal(r.page.status, 401, `${what}: refused`);
    t.match(r.page.text, /Wrong email or password/, `${what}: the usual words`);
    t.equal(r.step, undefined, `${what}: no step`);
  }
  t.equal(await countRows(s, 'account_token'), 0, 'nothing held');
  // Bob has no TOTP: signed in at once.
  const bob = await password(s, 'bob@example.com');
  t.equal(bob.page.status, 303, 'an account without TOTP signs in with the password');
});

t.test('a mistyped code keeps the step; a recovery code finishes it', async (t) => {
  const { s, codes } = await setUp(t);
  const { b, step } = await password(s, 'ada@example.com');
  const mistyped = await b.form('/signin/code', { step: step!, otp: '000000' });
  t.equal(mistyped.status, 401);
  t.match(mistyped.text, /role="alert">The code is wrong/, 'said in an error box, this time');
  t.match(mistyped.text, `name="step" value="${step}"`, 'the same step');
  t.notMatch(mistyped.text, /name="password"/, 'still only the code');
  t.equal((await b.form('/signin/code', { step: step!, otp: codes[0]! })).status, 303, 'a recovery code in the same box');
  const again = await b.form('/signin/code', { step: step!, otp: codes[1]! });
  t.equal(again.status, 400, 'a finished step is not finished twice');
  t.match(again.text, /expired, was finished already/);
});

t.test('the step belongs to the browser that sent the password, for five minutes, and ends with the password', async (t) => {
  const { s, clock, secret } = await setUp(t);
  const { step } = await password(s, 'ada@example.com');
  const other = browser(s);
  await other.go('/signin');
  const stolen = await other.form('/signin/code', { step: step!, otp: await totpAt(secret, clock) });
  t.equal(stolen.status, 400, 'another browser cannot finish it');
  t.match(stolen.text, /begun in another browser/);
  t.throws(() => other.pageToken(), 'not signed in there');

  const late = await password(s, 'ada@example.com');
  clock.advance(5 * 60_000 + 1000);
  const expired = await late.b.form('/signin/code', { step: late.step!, otp: await totpAt(secret, clock) });
  t.equal(expired.status, 400, 'five minutes later: expired');
  t.match(expired.text, /has expired/);

  const held = await password(s, 'ada@example.com');
  clock.advance(30_000);
  const ada = await s.action('user_account', 'signin', { email: 'ada@example.com', password: PASSWORD, otp: await totpAt(secret, clock) });
  const changed = await s.action(
    'user_account',
    'change_password',
    { currentPassword: PASSWORD, password: `${PASSWORD} 2`, passwordConfirm: `${PASSWORD} 2` },
    JSON.parse(ada.text).find((i: { Attributes: { key?: string } }) => i.Attributes.key === 'token').Attributes.value,
  );
  t.equal(changed.status, 200, 'the password is changed elsewhere');
  clock.advance(30_000);
  const after = await held.b.form('/signin/code', { step: held.step!, otp: await totpAt(secret, clock) });
  t.equal(after.status, 400, 'the step held for the old password ends with it');
  t.throws(() => held.b.pageToken());
});

t.test('two codes sent at once for one step: one signs in', async (t) => {
  const { s, codes } = await setUp(t);
  for (let trial = 0; trial < 3; trial++) {
    const { b, step } = await password(s, 'ada@example.com');
    const before = await sessions(s);
    // Two recovery codes, each good on its own: only the step can decide between them.
    const [x, y] = codes.splice(0, 2);
    const answers = await Promise.all([x!, y!].map((otp) => b.form('/signin/code', { step: step!, otp })));
    t.same(answers.map((a) => a.status).sort(), [303, 400], `trial ${trial}: one sign-in, one refusal`);
    t.equal(await sessions(s), before + 1, `trial ${trial}: one session`);
  }
});
