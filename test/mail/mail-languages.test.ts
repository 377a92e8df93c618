// Every mail in its reader's language, through a real SMTP server: an account that chose German
// and one that chose French on a server whose default is English receive the new-sign-in, SSH key
// added and removed, confirmation, reset, sign-in code, recovery used, unlock and email moved
// mails in their language, subject and body without an English word (the links, codes,
// addresses and action names aside); an invitation, to an address with no account yet, is in the
// server's --default-language.
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, setSignup, tokenOf, withAdmin, type TestServer } from '../helpers/server';
import { startSmtp, type Mail, type MailSink } from '../helpers/smtp';
import { CATALOGUES, openMessages, type MessageKey } from '../../src/i18n';
import { ENGLISH_SOURCE } from '../helpers/english';

type Lang = 'de' | 'fr';
type Tap = Parameters<typeof withAdmin>[0];

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const SSH_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPcB2xAnyxMnNUq/fILBeR+NY2oiDu4f03mavXYPb1fu laptop';

const ENGLISH = new RegExp(ENGLISH_SOURCE, 'giu');

/** English words left in a mail's text, once its links, addresses, codes and action names are taken out. */
const englishLeft = (text: string) => {
  const words = text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\S+@\S+/g, ' ')
    .replace(/SHA256:\S+/g, ' ')
    .replace(/\b\w+_\w+\b/g, ' ') // unlock_signin, verify_email
    .replace(/\b[A-Za-z0-9_-]{20,}\b/g, ' ') // tokens
    .replace(/\b[A-Z0-9]{8}\b/g, ' ') // sign-in codes
    .match(ENGLISH);
  return [...new Set(words ?? [])];
};

/** An RFC 2047 header value as text (nodemailer writes a subject with accents as =?UTF-8?Q?…?=). */
const decodeHeader = (value: string) =>
  value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?UTF-8\?([QB])\?([^?]*)\?=/gi, (_, how: string, data: string) =>
    how.toUpperCase() === 'B'
      ? Buffer.from(data, 'base64').toString('utf8')
      : Buffer.from(
          data.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (__, h: string) => String.fromCharCode(parseInt(h, 16))),
          'latin1',
        ).toString('utf8'),
  );

/** A received mail's subject and body as text. */
function read(mail: Mail): { subject: string; text: string } {
  const head = mail.raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
  const subject = decodeHeader(/^Subject: (.*)$/im.exec(head)?.[1] ?? '');
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1].toLowerCase();
  // The sink undoes quoted-printable byte by byte: its bytes are the UTF-8 they were.
  const text =
    encoding === 'quoted-printable'
      ? Buffer.from(mail.text, 'latin1').toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(mail.text.replace(/\s+/g, ''), 'base64').toString('utf8')
        : mail.text;
  return { subject, text };
}

/** The mail to `to` whose subject is the catalogue's `key` in `lang` (its text before any {place}). */
async function received(smtp: MailSink, s: TestServer, to: string, lang: Lang, key: MessageKey) {
  await s.core.settle();
  const start = CATALOGUES[lang][key].split('{')[0];
  const until = Date.now() + 10_000;
  for (;;) {
    const found = smtp.mails
      .filter((m) => m.to.includes(to))
      .map(read)
      .find((m) => m.subject.startsWith(start));
    if (found) return found;
    if (Date.now() > until) {
      const seen = smtp.mails.filter((m) => m.to.includes(to)).map((m) => read(m).subject);
      throw new Error(`no mail "${start}" to ${to}; got: ${seen.join(' | ')}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The mail is in `lang`: no English word in its subject or body. */
function inLanguage(t: Tap, mail: { subject: string; text: string }, what: string) {
  t.same(englishLeft(mail.subject), [], `${what}: the subject has no English word (${mail.subject})`);
  t.same(englishLeft(mail.text), [], `${what}: the body has no English word`);
}

t.test("each mail to an account in the language it chose, the server's default being English", async (t) => {
  const smtp = await startSmtp(t);
  const s = await withAdmin(t, { smtpUrl: smtp.url, trustProxy: '1', signinFailuresPerAccountTotal: '3' });
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signin_by_mail', '--guest', 'on'])).code, 0, 'sign-in by mail on');
  const scimToken: string = (await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'hr'])).json.token;
  const scim = (method: string, path: string, body?: unknown) =>
    fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, any> }));

  for (const [lang, name] of [
    ['de', 'anna'],
    ['fr', 'louise'],
  ] as const) {
    await t.test(lang, async (t) => {
      const email = `${name}@example.com`;
      const tr = openMessages('en', null).translator(lang);
      const hello = tr.t('mail.hello', { name });
      t.equal((await s.signup(email)).status, 200);
      const signin = async (userAgent: string) => {
        const r = await s.call('POST', '/action/user_account/signin', {
          body: { attributes: { email, password: PASSWORD } },
          headers: { 'user-agent': userAgent },
        });
        t.equal(r.status, 200, `signed in with ${userAgent.slice(0, 20)}`);
        return tokenOf(r);
      };
      const token = await signin(FIREFOX);
      const caller = { token, client: '127.0.0.1', userAgent: FIREFOX };
      t.match(await s.core.accounts.language.setMine(caller, lang), { language: lang, changed: true }, `the account chooses ${lang}`);

      // A sign-in from a browser the account has not used: the browser and the date as the reader writes them.
      await signin(SAFARI);
      const told = await received(smtp, s, email, lang, 'mail.new_signin.subject');
      inLanguage(t, told, 'new sign-in');
      t.match(told.text, hello);
      t.match(told.text, tr.t('mail.new_signin.device', { browser: 'Safari', system: 'iOS' }));
      t.match(told.text, /\d{4}, \d{1,2}:\d\d UTC/, 'the date in its locale');
      t.match(told.text, tr.t('mail.new_signin.once', { duration: tr.duration(14 * 86400) }), 'the link lasts 14 days, in words');

      // An SSH key added, then removed.
      const key = await s.core.accounts.ssh.addMine(caller, SSH_KEY);
      inLanguage(t, await received(smtp, s, email, lang, 'mail.ssh.added.subject'), 'SSH key added');
      await s.core.accounts.ssh.removeMine(caller, key.id);
      inLanguage(t, await received(smtp, s, email, lang, 'mail.ssh.removed.subject'), 'SSH key removed');

      // Confirmation and reset.
      t.equal((await s.action('user_account', 'request_verification', {}, token)).status, 200);
      inLanguage(t, await received(smtp, s, email, lang, 'mail.verify.subject'), 'confirm the address');
      t.equal((await s.action('user_account', 'reset_password_request', { email })).status, 200);
      inLanguage(t, await received(smtp, s, email, lang, 'mail.reset.subject'), 'reset the password');

      // A sign-in code.
      t.equal((await s.action('user_account', 'signin_by_mail', { email })).status, 200);
      const code = await received(smtp, s, email, lang, 'mail.signin_code.subject');
      inLanguage(t, code, 'sign-in code');
      t.match(code.subject, /: [A-Z0-9]{8}$/, 'the code in the subject');

      // A recovery link made at the shell, opened: the person is told.
      const link: string = (await cli(s.dataDir, ['--json', 'user', 'recovery-link', email])).json.link;
      await s.core.accounts.openRecovery({ token: null, client: '127.0.0.1', userAgent: FIREFOX }, link.split('#token=')[1]);
      const used = await received(smtp, s, email, lang, 'mail.recovery_used.subject');
      inLanguage(t, used, 'recovery link used');
      t.match(used.text, tr.duration(15 * 60), 'the 15 minutes in words');

      // Failed sign-ins from places the account has not used, up to its ceiling: the unlock link.
      for (const address of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
        await s.call('POST', '/action/user_account/signin', {
          body: { attributes: { email, password: 'wrong guess' } },
          headers: { 'x-forwarded-for': address },
        });
      }
      const unlock = await received(smtp, s, email, lang, 'mail.unlock.subject');
      inLanguage(t, unlock, 'unlock');
      t.match(unlock.text, tr.t('mail.link_once', { duration: tr.duration(3600) }));

      // The organization's provisioning service moves the account to a new address: the old one is told.
      const user = (await scim('GET', `/Users?filter=${encodeURIComponent(`emails.value eq "${email}"`)}`)).body.Resources[0];
      const moved = await scim('PATCH', `/Users/${user.id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: `${name}@new.example` }],
      });
      t.equal(moved.status, 200, moved.body.detail);
      const notice = await received(smtp, s, email, lang, 'mail.email_moved.subject');
      inLanguage(t, notice, 'email moved');
      t.match(notice.text, `${name}@new.example`);
    });
  }
});

t.test("an invitation, to an address with no account, in the server's --default-language", async (t) => {
  for (const lang of ['de', 'fr'] as const) {
    const smtp = await startSmtp(t);
    const s = await withAdmin(t, { smtpUrl: smtp.url, defaultLanguage: lang });
    const r = await s.action('user_account', 'invite', { email: `new-${lang}@example.com` }, s.adminToken);
    t.equal(r.status, 200, r.text);
    const mail = await received(smtp, s, `new-${lang}@example.com`, lang, 'mail.invitation.subject');
    inLanguage(t, mail, `invitation in ${lang}`);
    t.match(mail.text, CATALOGUES[lang]['mail.invitation.hello']);
    t.match(
      mail.text,
      openMessages(lang, null)
        .translator(lang)
        .duration(7 * 86400),
      'its 7 days in words',
    );
  }
});
