// Attack review, item 12: an email such as `ceo<mallory@evil.example>`, or one with a comma, sent
// the verification mail to another mailbox and marked the stored string verified. Refused at every
// entry point; and the mailer hands nodemailer an explicit envelope of the one stored address.
import t from 'tap';
import { cli } from '../helpers/cli';
import { startSmtp } from '../helpers/smtp';
import { errorCode, PASSWORD, startTestServer, withAdmin } from '../helpers/server';

const HOSTILE = [
  'ceo<mallory@evil.example>',
  'ceo@example.com,mallory@evil.example',
  'ceo@example.com;mallory@evil.example',
  '"ceo@example.com"@evil.example',
  'mallory@evil.example (ceo@example.com)',
  'ceo@[127.0.0.1]',
];

t.test('addresses that name another mailbox are refused on signup, change_email, the record API and the shell', async (t) => {
  const smtp = await startSmtp(t);
  const s = await withAdmin(t, { smtpUrl: smtp.url });
  const token = await s.signin('admin@example.com');
  for (const email of HOSTILE) {
    const signup = await s.action('user_account', 'signup', { email, name: 'X', password: PASSWORD, passwordConfirm: PASSWORD }, token);
    t.equal(signup.status, 400, `signup: ${email}`);
    t.equal(errorCode(signup), 'invalid_input');
    const change = await s.action('user_account', 'change_email', { email, password: PASSWORD }, token);
    t.equal(change.status, 400, `change_email: ${email}`);
    const record = await s.call('POST', '/api/user_account', {
      token,
      body: { data: { type: 'user_account', attributes: { email, name: 'X', password: PASSWORD, passwordConfirm: PASSWORD } } },
    });
    t.equal(record.status, 400, `record API: ${email}`);
    const shell = await cli(s.dataDir, ['user', 'create', '--email', email, '--password-stdin'], { stdin: PASSWORD });
    t.equal(shell.code, 2, `shell: ${email}`);
  }
  await s.core.settle();
  t.equal(smtp.mails.filter((m) => m.to.some((to) => to.includes('evil'))).length, 0, 'no mail went to evil.example');
});

t.test('the mail goes to exactly the stored address (explicit envelope)', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  t.equal((await s.signup('o.brien+tag@example.com')).status, 200);
  const mail = await smtp.next('o.brien+tag@example.com');
  t.same(mail.to, ['o.brien+tag@example.com'], 'one recipient, the stored address');
});
