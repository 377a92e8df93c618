// One TOTP code sent to reauthenticate by four requests at once: it confirms once; the others are refused as a replay.
import t from 'tap';
import { manualClock, totpAt } from '../helpers/clock';
import { errorCode, PASSWORD, startTestServer, tokenOf } from '../helpers/server';

t.test('the same code, four requests at once: one confirms', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  await s.signup('admin@example.com');
  await s.core.accounts.create(s.core.shell, { email: 'ada@example.com', password: PASSWORD });
  const ada = await s.signin('ada@example.com');
  const enrolled = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, ada);
  const secret: string = enrolled.body[0].Attributes.secret;
  const token = tokenOf(await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, s.core.clock) }, ada));
  clock.advance(60_000);
  const code = await totpAt(secret, s.core.clock);
  const answers = await Promise.all([1, 2, 3, 4].map(() => s.action('user_account', 'reauthenticate', { otp: code }, token)));
  t.equal(answers.filter((a) => a.status === 200).length, 1, 'one confirms');
  t.same(
    answers.filter((a) => a.status !== 200).map((a) => errorCode(a)),
    ['otp_invalid', 'otp_invalid', 'otp_invalid'],
    'the others: the code was used',
  );
});
