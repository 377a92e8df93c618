// Confusable spellings of one address are one identity on signup, signin and reset.
import t from 'tap';
import { errorCode, PASSWORD, setSignup, startTestServer } from '../helpers/server';
import { startSmtp } from '../helpers/smtp';

t.test('mıke@, MİKE@, ｍｉｋｅ@, NFD/NFC and the Kelvin sign resolve to one account everywhere', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);

  t.equal((await s.signup('mike@example.com')).status, 200);
  for (const look of ['mıke@example.com', 'MİKE@example.com', 'ｍｉｋｅ@example.com', 'MIKE@EXAMPLE.COM']) {
    const r = await s.signup(look);
    t.equal(r.status, 409, `signup ${look}: taken`);
    t.equal(errorCode(r), 'email_taken');
    t.ok(await s.signin(look), `signin ${look}: the same account`);
  }
  t.equal((await s.signup('\u212Aate@example.com')).status, 200, 'Kelvin-sign kate');
  t.ok(await s.signin('kate@example.com'), 'signs in as kate@');
  t.equal((await s.signup('jose\u0301@example.com')).status, 200, 'NFD josé');
  t.ok(await s.signin('jos\u00e9@example.com'), 'signs in with the NFC spelling');

  await s.action('user_account', 'reset_password_request', { email: 'mıke@example.com' });
  const mail = await smtp.next('mike@example.com', 2);
  t.match(mail.raw, /Reset your password/, 'reset via a look-alike goes to the real address');
  const rows = await s.db('user_account').select('email_key');
  t.equal(rows.length, 4, 'admin, mike, kate, josé');
  void PASSWORD;
});
