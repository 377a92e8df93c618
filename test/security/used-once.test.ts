// "Used once" under requests sent at once, for the single-use links Gatehouse mails: the same
// password reset token or email verification token presented by four requests together works for
// exactly one (each is one conditional write whose row count decides). Invitations at once:
// test/attacks/new-wings.test.ts; authorization codes, refresh tokens: test/oidc/used-once.test.ts;
// SAML logout requests: test/saml/logout.test.ts.
import t from 'tap';
import { errorCode, setSignup, startTestServer } from '../helpers/server';
import { startSmtp, tokenIn } from '../helpers/smtp';

const AT_ONCE = 4;

t.test('a reset link and a verification link sent by four requests at once work once', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('jo@example.com');
  const verify = tokenIn(await smtp.next('jo@example.com'));
  const verified = await Promise.all(Array.from({ length: AT_ONCE }, () => s.action('user_account', 'verify_email', { token: verify })));
  t.equal(verified.filter((r) => r.status === 200).length, 1, 'one verification');
  t.ok(
    verified.filter((r) => r.status !== 200).every((r) => errorCode(r) === 'token_invalid'),
    'the others: token_invalid',
  );

  for (let trial = 0; trial < 3; trial++) {
    t.equal((await s.action('user_account', 'reset_password_request', { email: 'jo@example.com' })).status, 200);
    const token = tokenIn(await smtp.next('jo@example.com', 2 + trial));
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) => {
        const password = `a fresh password number ${trial}${i}`;
        return s.action('user_account', 'reset_password', { token, password, passwordConfirm: password });
      }),
    );
    const won = answers.findIndex((r) => r.status === 200);
    t.equal(answers.filter((r) => r.status === 200).length, 1, `trial ${trial}: one reset`);
    t.ok(
      answers.filter((r) => r.status !== 200).every((r) => errorCode(r) === 'token_invalid'),
      'the others: token_invalid',
    );
    // The password that won is the one that signs in.
    t.ok(await s.signin('jo@example.com', `a fresh password number ${trial}${won}`), 'the winner set the password');
  }
});
