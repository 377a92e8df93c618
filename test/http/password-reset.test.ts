// Password recovery over a real SMTP server.
import t from 'tap';
import { errorCode, PASSWORD, setSignup, startTestServer } from '../helpers/server';
import { manualClock } from '../helpers/clock';
import { startSmtp, tokenIn } from '../helpers/smtp';

const NEW = 'a fresh new password 9';

async function setup(t: Parameters<typeof startTestServer>[0], flags = {}, clock = manualClock()) {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url, ...flags }, undefined, { clock });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('jo@example.com');
  // The signup verification mails are not what these tests read.
  await smtp.next('jo@example.com');
  return { s, smtp };
}

const request = (s: Awaited<ReturnType<typeof setup>>['s'], email: string) => s.action('user_account', 'reset_password_request', { email });
const reset = (s: Awaited<ReturnType<typeof setup>>['s'], token: string, password = NEW) =>
  s.action('user_account', 'reset_password', { token, password, passwordConfirm: password });

t.test('reset: old sessions refused, new password works, the token works once', async (t) => {
  const { s, smtp } = await setup(t);
  const session = await s.signin('jo@example.com');
  const r = await request(s, 'JO@example.com');
  t.equal(r.status, 200);
  const mail = await smtp.next('jo@example.com', 2);
  t.match(mail.raw, /Subject: Reset your password/);
  const token = tokenIn(mail);

  const weak = await reset(s, token, 'password123');
  t.equal(errorCode(weak), 'password_too_common', 'a weak password is refused without spending the token');
  const mismatch = await s.action('user_account', 'reset_password', { token, password: NEW, passwordConfirm: NEW + 'x' });
  t.equal(errorCode(mismatch), 'password_mismatch');

  const ok = await reset(s, token);
  t.equal(ok.status, 200);
  const old = await s.call('GET', '/api/user_account', { token: session });
  t.equal(old.status, 401, 'a session issued before the reset is refused');
  t.equal(errorCode(old), 'invalid_token');
  t.equal((await s.action('user_account', 'signin', { email: 'jo@example.com', password: PASSWORD })).status, 401, 'old password refused');
  t.ok(await s.signin('jo@example.com', NEW), 'new password works');

  const reuse = await reset(s, token, 'yet another password 7');
  t.equal(reuse.status, 400);
  t.equal(errorCode(reuse), 'token_invalid', 'a used token is rejected');
  t.notOk(s.logs.join('').includes(token), 'the token never reaches the log');
});

t.test('an expired reset token is rejected', async (t) => {
  const clock = manualClock();
  const { s, smtp } = await setup(t, { resetTtl: '1' }, clock);
  await request(s, 'jo@example.com');
  const token = tokenIn(await smtp.next('jo@example.com', 2));
  clock.advance(1200);
  const r = await reset(s, token);
  t.equal(r.status, 400);
  t.equal(errorCode(r), 'token_expired');
  t.ok(await s.signin('jo@example.com'), 'the password is unchanged');
});

t.test('a new request voids older links; a reset voids all of them', async (t) => {
  const { s, smtp } = await setup(t);
  await request(s, 'jo@example.com');
  const first = tokenIn(await smtp.next('jo@example.com', 2));
  await request(s, 'jo@example.com');
  const second = tokenIn(await smtp.next('jo@example.com', 3));
  t.equal(errorCode(await reset(s, first)), 'token_invalid', 'the older link is void');
  t.equal((await reset(s, second)).status, 200);
});

t.test('unknown email: the same answer, no mail', async (t) => {
  const { s, smtp } = await setup(t);
  const known = await request(s, 'jo@example.com');
  const unknown = await request(s, 'nobody@example.com');
  const malformed = await request(s, 'not-an-email');
  t.equal(unknown.status, known.status);
  t.same(unknown.body, known.body, 'same body');
  t.same(malformed.body, known.body, 'same body for a malformed address');
  await smtp.next('jo@example.com', 2);
  await s.core.settle();
  t.notOk(
    smtp.mails.some((m) => m.to.includes('nobody@example.com')),
    'no mail to an unknown address',
  );
  // The answer is sent before any lookup, so known and unknown addresses take the same path.
});

t.test('at most 3 reset requests per account per hour', async (t) => {
  const { s, smtp } = await setup(t);
  for (let i = 0; i < 5; i++) t.equal((await request(s, 'jo@example.com')).status, 200, 'always the same answer');
  await s.core.settle();
  t.equal(smtp.mails.filter((m) => m.to.includes('jo@example.com')).length, 1 + 3, 'signup mail + 3 reset mails');
  t.match(s.logs.join(''), /"event":"reset_request_limited"/);
});
