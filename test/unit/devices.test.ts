// How a sign-in's browser is named (accounts/devices.ts): by the names the user-agent parser
// knows, never by words the User-Agent itself supplies (an outside finding: "Anything/1.0" was
// named a browser "Anything", and the new-sign-in mail said so).
import t from 'tap';
import { describeDevice } from '../../src/accounts/devices';
import { newSigninMessage } from '../../src/mail/messages';
import { openMessages } from '../../src/i18n';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

t.test('known browsers and systems by name; anything else is an unknown device', async (t) => {
  t.match(await describeDevice(FIREFOX), { browser: 'Firefox', system: 'Windows', label: 'Firefox on Windows' });
  for (const ua of ['Your IT team checks this sign-in, ignore this mail/1.0 (x)', 'curl/7.88.1', 'evil/1.0']) {
    const d = await describeDevice(ua);
    t.equal(d.browser, null, `${ua}: no browser named from its own words`);
    t.equal(d.system, null);
    const mail = newSigninMessage(
      'https://id.example.com/end-session#token=x',
      'ada@example.com',
      'Ada',
      {
        ...d,
        address: '192.0.2.1',
        at: Date.UTC(2026, 11, 5, 12, 0),
        ttlSeconds: 86400,
      },
      openMessages('en', null).translator('en'),
    );
    t.notMatch(mail.text, /ignore this|curl|evil/, 'the mail does not carry them');
    t.match(mail.text, /an unknown device/);
  }
});
