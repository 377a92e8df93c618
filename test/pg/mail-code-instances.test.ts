// A mailed sign-in code across two packaged instances on one PostgreSQL database, both started
// with --signin-by-mail: the code sent to both at once (four requests) opens one session; the
// mailed link, sent four at once by the browser that asked, signs in once.
import t from 'tap';
import { twoInstances } from '../helpers/pg';
import { startSmtp, type MailSink } from '../helpers/smtp';

const PW = 'mail code instances password';

async function codeMail(smtp: MailSink, n: number) {
  const until = Date.now() + 15_000;
  for (;;) {
    const mails = smtp.mails.filter((m) => /Subject: Your sign-in code/.test(m.raw));
    if (mails.length >= n) {
      const text = mails[n - 1].text;
      return {
        code: /\n {2}([A-Z2-9]{8})\r?\n/.exec(text)![1],
        request: /\/signin\/mail\/link\?request=([A-Za-z0-9_-]{22})#token=/.exec(text)![1],
      };
    }
    if (Date.now() > until) throw new Error(`no sign-in code #${n}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('a mailed code and its link, sent to two instances at once, sign in once', async (t) => {
  const smtp = await startSmtp(t);
  const two = await twoInstances(t, PW, ['--signin-by-mail', '--smtp-url', smtp.url]);
  if (!two) return;
  const { a, b, shell, spread } = two;
  const sessions = async () => Number(JSON.parse((await shell(['--json', 'user', 'sessions', 'admin@example.com'])).stdout).sessions.length);
  let mailed = 0;

  // Two trials of two codes each: five codes per typed address are allowed in a window (--no-rate-limits lifts only the per-client limit).
  for (let trial = 0; trial < 2; trial++) {
    // The action: the request's secret, then the code to both instances at once.
    const asked = await fetch(`${a.url}/action/user_account/signin_by_mail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ attributes: { email: 'admin@example.com' } }),
    });
    const request = ((await asked.json()) as Array<{ Attributes: { key?: string; value?: string } }>).find((i) => i.Attributes.key === 'mail_code_request')!
      .Attributes.value!;
    const { code } = await codeMail(smtp, ++mailed);
    const before = await sessions();
    const answers = await spread((base) =>
      fetch(`${base}/action/user_account/signin_by_mail`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes: { request, code } }),
      }).then((r) => r.status),
    );
    t.equal(answers.filter((s) => s === 200).length, 1, `trial ${trial}: the code signed in once`);
    t.equal(await sessions(), before + 1, 'one session');

    // The pages: one browser (one cookie jar) asks on A, then sends the link's form to A and B at once.
    const jar = new Map<string, string>();
    const go = async (base: string, path: string, form?: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: form ? new URLSearchParams({ csrf: jar.get('__Host-gatehouse_csrf') ?? '', ...form }).toString() : undefined,
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        jar.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
      return { status: res.status, location: res.headers.get('location'), text: await res.text() };
    };
    await go(a.url, '/signin/mail');
    const page = await go(a.url, '/signin/mail', { email: 'admin@example.com' });
    t.match(page.text, /a code is on its way/, 'asked');
    const link = await codeMail(smtp, ++mailed);
    const opened = await go(b.url, `/signin/mail/link?request=${link.request}`);
    t.match(opened.text, /Sign in with the code from your email, in this browser/, 'the other instance knows this browser asked');
    const before2 = await sessions();
    const sent = await spread((base) => go(base, '/signin/mail/link', { request: link.request, token: link.code }));
    t.equal(sent.filter((r) => r.status === 303 && r.location === '/account').length, 1, `trial ${trial}: the link signed in once`);
    t.equal(await sessions(), before2 + 1, 'one session');
  }
});
