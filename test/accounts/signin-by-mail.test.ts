// Sign-in by a mailed code: off by default; turned on, /signin offers it, the code arrives through
// a real SMTP server and signs in (amr otp, one factor), the mailed link signs in only in the
// browser that asked (another browser is told so and is not signed in), an unknown address gets
// the same answer and no mail, five wrong codes end a code, four requests at once open one
// session, the per-address limits hold for every address alike, and a session opened by a code
// is not enough on its own to add a way in. Pages in Chromium, photographed at 360 and 1280 px.
import t from 'tap';
type Tap = Parameters<typeof passkeyServer>[0];
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { passkeyServer } from '../helpers/passkeys';
import { errorCode, PASSWORD, tokenOf, type TestServer } from '../helpers/server';
import { startSmtp, type MailSink } from '../helpers/smtp';
import { amrOf } from '../../src/accounts/assurance';
import { totpAt } from '../helpers/clock';
import { systemClock } from '../../src/clock';

const codeIn = (text: string) => {
  const m = /\n {2}([ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8})\r?\n/.exec(text);
  if (!m) throw new Error(`no code in: ${text}`);
  return m[1];
};
const linkIn = (text: string) => {
  const m = /(http\S+\/signin\/mail\/link\?request=[A-Za-z0-9_-]{22}#token=[A-Z0-9]{8})/.exec(text);
  if (!m) throw new Error(`no link in: ${text}`);
  return m[1];
};

async function setUp(t: Parameters<typeof passkeyServer>[0]) {
  const smtp = await startSmtp(t);
  const { s, base, adminToken } = await passkeyServer(t, { smtpUrl: smtp.url });
  return { s, base, smtp, adminToken };
}

const turnOn = async (t: Tap, s: TestServer) =>
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signin_by_mail', '--guest', 'on'])).code, 0, 'turned on');

/** Asks for a code through the action: the request to send back. */
async function ask(s: TestServer, email: string) {
  const r = await s.action('user_account', 'signin_by_mail', { email });
  const request = (r.body as Array<{ Attributes: { key?: string; value?: string } }>)?.find?.((i) => i.Attributes.key === 'mail_code_request')?.Attributes
    .value;
  return { r, request };
}

/** The n-th sign-in code mailed to `email`. */
async function mailedCode(s: TestServer, smtp: MailSink, email: string, n: number) {
  await s.core.settle();
  const until = Date.now() + 10_000;
  for (;;) {
    const codes = smtp.mails.filter((m) => m.to.includes(email) && /Subject: Your sign-in code/.test(m.raw));
    if (codes.length >= n) return { code: codeIn(codes[n - 1].text), link: linkIn(codes[n - 1].text), mail: codes[n - 1] };
    if (Date.now() > until) throw new Error(`no sign-in code #${n} to ${email}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('off by default: no offer, no page, the action refused', async (t) => {
  const { s, base, smtp } = await setUp(t);
  const page = await fetch(`${base}/signin`).then((r) => r.text());
  t.notMatch(page, /signin-by-mail/, 'the sign-in page offers no code by mail');
  t.equal((await fetch(`${base}/signin/mail`)).status, 404, '/signin/mail is not there');
  const { r } = await ask(s, 'admin@example.com');
  t.equal(r.status, 401, 'the action is closed to guests');
  await s.core.settle();
  t.equal(smtp.mails.filter((m) => /sign-in code/.test(m.raw)).length, 0, 'no code mailed');
});

t.test('in Chromium: a code by mail signs in; the link signs in only in the browser that asked', async (t) => {
  const { s, base, smtp } = await setUp(t);
  await turnOn(t, s);
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}/signin`);
  await screenshots(page, 'signin-with-mail-offer');
  await page.click('#signin-by-mail');
  await page.waitForURL(/\/signin\/mail$/);
  await screenshots(page, 'signin-mail-ask');
  await page.getByLabel('Email').fill('admin@example.com');
  await page.getByRole('button', { name: 'Email me a code' }).click();
  await page.getByLabel('Code from the email').waitFor();
  await screenshots(page, 'signin-mail-code');
  const first = await mailedCode(s, smtp, 'admin@example.com', 1);
  t.match(first.mail.raw, /Subject: Your sign-in code/, 'the mail says what it is');

  // A wrong code: the page again, saying so.
  await page.getByLabel('Code from the email').fill('AAAAAAAA');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.notice.error').waitFor();
  t.match(await page.locator('.notice.error').textContent(), /wrong, has expired or was used/);
  await screenshots(page, 'signin-mail-code-wrong');
  // Typed in lower case with a space: the right one.
  await page.getByLabel('Code from the email').fill(`${first.code.slice(0, 4).toLowerCase()} ${first.code.slice(4)}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/account/);
  const session = await s.db('session').orderBy('created_at', 'desc').first();
  t.equal(session.method, 'mail', 'the session says it was a mailed code');
  t.same(amrOf({ method: session.method, two_factor: Boolean(session.two_factor), upstream_amr: null }), ['otp'], 'amr otp, one factor');
  t.notOk(Boolean(session.two_factor), 'single factor');

  // A second code: its link opened in another browser says so and signs nobody in.
  const asker = await (await browser.newContext()).newPage();
  await asker.goto(`${base}/signin/mail`);
  await asker.getByLabel('Email').fill('admin@example.com');
  await asker.getByRole('button', { name: 'Email me a code' }).click();
  await asker.getByLabel('Code from the email').waitFor();
  const second = await mailedCode(s, smtp, 'admin@example.com', 2);
  const other = await (await browser.newContext()).newPage();
  await other.goto(second.link);
  t.match(await other.locator('.notice.error').textContent(), /signs in only in the browser where the code was asked for/);
  await screenshots(other, 'signin-mail-link-elsewhere');
  t.equal(await other.locator('input[name="token"]').count(), 0, 'no form to send the code from here');
  // Even the code sent from that browser by hand is refused, without wearing the code out.
  const res = await other.request.post(`${base}/signin/mail/link`, {
    form: {
      csrf: (await other.context().cookies()).find((c) => c.name.endsWith('csrf'))?.value ?? '',
      request: new URL(second.link).searchParams.get('request')!,
      token: second.code,
    },
  });
  t.notMatch(await res.text(), /Sign out/, 'not signed in');
  t.notOk(
    (await other.context().cookies()).some((c) => /token/.test(c.name)),
    'no session cookie in the other browser',
  );

  // In the browser that asked: the link fills the form, one button signs in.
  await asker.goto(second.link);
  await asker.getByRole('button', { name: 'Sign in' }).waitFor();
  t.notMatch(asker.url(), /#token/, 'the code is out of the address bar');
  await screenshots(asker, 'signin-mail-link');
  await asker.getByRole('button', { name: 'Sign in' }).click();
  await asker.waitForURL(/\/account/);
  // Used once: the link again says it is spent.
  await asker.goto(second.link);
  t.match(await asker.locator('.notice.error').textContent(), /expired or was used/);
});

t.test('the same answer for an address with no account, and no mail', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  const known = await ask(s, 'admin@example.com');
  const unknown = await ask(s, 'nobody@example.com');
  t.equal(known.r.status, 200);
  t.equal(unknown.r.status, 200);
  t.same(
    (unknown.r.body as Array<{ ResponseType: string; Attributes: Record<string, unknown> }>).map((i) => [
      i.ResponseType,
      i.Attributes.key ?? i.Attributes.message,
    ]),
    (known.r.body as Array<{ ResponseType: string; Attributes: Record<string, unknown> }>).map((i) => [
      i.ResponseType,
      i.Attributes.key ?? i.Attributes.message,
    ]),
    'the same items',
  );
  await mailedCode(s, smtp, 'admin@example.com', 1);
  t.equal(smtp.mails.filter((m) => m.to.includes('nobody@example.com')).length, 0, 'nothing mailed to an address without an account');
  // A code guessed for it is refused as a wrong one.
  const tried = await s.action('user_account', 'signin_by_mail', { request: unknown.request, code: 'ABCDEFGH' });
  t.equal(tried.status, 401);
});

t.test('five wrong codes end it; the right one then fails too', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  const { request } = await ask(s, 'admin@example.com');
  const { code } = await mailedCode(s, smtp, 'admin@example.com', 1);
  for (let i = 0; i < 5; i++) {
    const wrong = await s.action('user_account', 'signin_by_mail', { request, code: 'ZZZZZZZZ' });
    t.equal(wrong.status, 401, `wrong code ${i + 1}`);
  }
  const right = await s.action('user_account', 'signin_by_mail', { request, code });
  t.equal(right.status, 401, 'the code ended at its fifth wrong try');
  t.equal((await s.db('mail_code').first('tries')).tries, 5);
});

t.test('a burst of guesses sent at once: five are looked at, and the right code after them fails', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  const { request } = await ask(s, 'admin@example.com');
  const { code } = await mailedCode(s, smtp, 'admin@example.com', 1);
  const wrong = await Promise.all(Array.from({ length: 20 }, () => s.action('user_account', 'signin_by_mail', { request, code: 'ZZZZZZZZ' })));
  t.ok(
    wrong.every((r) => r.status === 401 || r.status === 429),
    'every guess refused',
  );
  t.equal((await s.db('mail_code').first('tries')).tries, 5, 'five tries taken, no more');
  const right = await s.action('user_account', 'signin_by_mail', { request, code });
  t.not(right.status, 200, 'the right code finds no try left');
});

t.test('an account with TOTP: the code is kept until the authenticator code is right too', async (t) => {
  const { s, smtp, adminToken } = await setUp(t);
  await turnOn(t, s);
  const secret: string = (await s.action('user_account', 'totp_enroll', { password: PASSWORD }, adminToken)).body[0].Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, systemClock) }, adminToken)).status, 200, 'TOTP on');
  const { request } = await ask(s, 'admin@example.com');
  const { code } = await mailedCode(s, smtp, 'admin@example.com', 1);
  const without = await s.action('user_account', 'signin_by_mail', { request, code });
  t.equal(without.status, 401);
  t.equal(errorCode(without), 'otp_required', 'asked for the authenticator code');
  t.notMatch(JSON.stringify(without.body), /password/, 'in words that fit a mailed code');
  const wrongOtp = await s.action('user_account', 'signin_by_mail', { request, code, otp: '000000' });
  t.not(wrongOtp.status, 200);
  t.notMatch(JSON.stringify(wrongOtp.body), /code is wrong, has expired/, 'a wrong authenticator code is not called a wrong mailed code');
  // An outside finding: three more wrong authenticator codes then wore the mailed code out (each
  // took one of its five tries). A right mailed code gives its try back.
  for (const otp of ['111111', '222222', '333333']) {
    const again = await s.action('user_account', 'signin_by_mail', { request, code, otp });
    t.match(JSON.stringify(again.body), /authenticator code/, `a wrong authenticator code (${otp}) is called so`);
  }
  t.equal((await s.db('mail_code').first('used_at')).used_at, null, 'the mailed code is not spent');
  t.equal((await s.db('mail_code').first('tries')).tries, 0, 'nor worn out by a right code');
  // The next step's code: the enrolment's own step is used already.
  const next = await totpAt(secret, { now: () => Date.now() + 30_000 });
  const signedIn = await s.action('user_account', 'signin_by_mail', { request, code, otp: next });
  t.equal(signedIn.status, 200, 'the same mailed code with the right authenticator code signs in');
  t.not((await s.db('mail_code').first('used_at')).used_at, null, 'and is spent');
  t.equal((await s.action('user_account', 'signin_by_mail', { request, code, otp: next })).status, 401, 'once');
});

t.test('four requests at once with the right code: one session', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  for (let trial = 0; trial < 3; trial++) {
    const { request } = await ask(s, 'admin@example.com');
    const { code } = await mailedCode(s, smtp, 'admin@example.com', trial + 1);
    const before = Number((await s.db('session').count({ n: '*' }))[0].n);
    const answers = await Promise.all([1, 2, 3, 4].map(() => s.action('user_account', 'signin_by_mail', { request, code })));
    t.equal(answers.filter((a) => a.status === 200).length, 1, `trial ${trial}: one signed in`);
    t.equal(Number((await s.db('session').count({ n: '*' }))[0].n), before + 1, 'one session opened');
  }
});

t.test('limits: per typed address, for every address alike; per account, silently', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  for (const email of ['admin@example.com', 'nobody@example.com']) {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push((await ask(s, email)).r.status);
    t.same(answers, [200, 200, 200, 200, 200, 429], `${email}: five, then refused`);
  }
  await s.core.settle();
  t.equal(smtp.mails.filter((m) => m.to.includes('admin@example.com') && /sign-in code/.test(m.raw)).length, 5, 'five codes mailed, no more');
});

t.test('a session opened by a code does not add a way in on its own', async (t) => {
  const { s, smtp } = await setUp(t);
  await turnOn(t, s);
  const { request } = await ask(s, 'admin@example.com');
  const { code } = await mailedCode(s, smtp, 'admin@example.com', 1);
  const signedIn = await s.action('user_account', 'signin_by_mail', { request, code });
  t.equal(signedIn.status, 200);
  const token = tokenOf(signedIn);
  const options = await s.action('user_account', 'passkey_options', {}, token);
  t.equal(options.status, 403);
  t.equal(errorCode(options), 'reauthentication_required', 'a passkey needs the password (or a code) again');
  const reauth = await s.action('user_account', 'reauthenticate', { password: PASSWORD }, token);
  t.equal(reauth.status, 200, 'the password entered again');
  t.equal((await s.action('user_account', 'passkey_options', {}, token)).status, 200, 'then it may');
});
