// --verify-url and --reset-url: apps with their own screens get their links in the mails.
import t from 'tap';
import { loadConfig } from '../../src/config';
import { startTestServer } from '../helpers/server';
import { startSmtp } from '../helpers/smtp';

t.test('mails carry the app’s links, with the token filled in', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, {
    smtpUrl: smtp.url,
    verifyUrl: 'https://app.example.com/verify#token={token}',
    resetUrl: 'https://app.example.com/reset?t={token}&from=mail',
  });
  await s.signup('ann@example.com');
  const verify = (await smtp.next('ann@example.com')).text;
  const token = /verify#token=([A-Za-z0-9_-]+)/.exec(verify)?.[1];
  t.ok(token, 'the verification mail links to the app');
  t.notMatch(verify, /\/verify-email#/, 'not to the built-in page');
  t.equal((await s.action('user_account', 'verify_email', { token })).status, 200, 'and its token works');
  await s.action('user_account', 'reset_password_request', { email: 'ann@example.com' });
  t.match((await smtp.next('ann@example.com', 2)).text, /https:\/\/app\.example\.com\/reset\?t=[A-Za-z0-9_-]+&from=mail/);
});

t.test('templates must be http(s) URLs with {token}', async (t) => {
  for (const bad of ['https://app.example.com/verify', 'javascript:alert({token})', 'not a url {token}']) {
    t.throws(() => loadConfig({ verifyUrl: bad }, {}), { code: 'invalid_input' }, bad);
  }
  t.equal(loadConfig({}, { GATEHOUSE_RESET_URL: 'http://localhost:5173/reset#{token}' }).resetUrl, 'http://localhost:5173/reset#{token}');
});
