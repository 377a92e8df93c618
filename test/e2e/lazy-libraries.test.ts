// The libraries the executable compiles on first use (scripts/build.mjs bundles them apart, as
// SEA assets: src/native/lazy.ts) work from the packaged executable: the body parser (any POST),
// nodemailer (the verification mail, to a real SMTP server), qrcode (the TOTP page's QR code) and
// oidc-provider (discovery; the whole flow is test/e2e/oidc-executable.test.ts).
import t from 'tap';
import { exeFolder, serveExe } from '../helpers/exe';
import { startSmtp } from '../helpers/smtp';

const PASSWORD = 'a long enough passphrase 42';

t.test('mail, the QR code and the OIDC provider load inside the executable', async (t) => {
  const smtp = await startSmtp(t);
  const { dir, exe, env } = exeFolder(t);
  const server = await serveExe(t, exe, ['--data-dir', `${dir}/data`, '--no-rate-limits', '--smtp-url', smtp.url], { env, cwd: dir });

  const signup = await fetch(`${server.url}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'lazy@example.com', name: 'Lazy', password: PASSWORD, passwordConfirm: PASSWORD } }),
  });
  t.equal(signup.status, 200, 'the body parser read the signup');
  const mail = await smtp.next('lazy@example.com');
  t.match(mail.text, /verify-email\?token=|token=[A-Za-z0-9_-]{20,}/, 'nodemailer sent the verification link');

  // The pages: sign in, then start TOTP enrolment, whose page draws the key as a QR code.
  const jar = new Map<string, string>();
  const go = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(server.url + path, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), origin: server.url, cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  };
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const csrfIn = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const signin = await go('/signin', form({ csrf: csrfIn(await (await go('/signin')).text()), email: 'lazy@example.com', password: PASSWORD }));
  t.equal(signin.status, 303, 'signed in on the pages');
  const account = await (await go('/account')).text();
  const enrol = await go('/account/totp/enroll', form({ csrf: csrfIn(account), totpPassword: PASSWORD }));
  const page = await enrol.text();
  t.equal(enrol.status, 200);
  t.match(page, /<figure class="qr"[^>]*><svg[^>]*>.*<path/s, 'qrcode drew the key');

  const discovery = await fetch(`${server.url}/.well-known/openid-configuration`);
  t.equal(discovery.status, 200);
  t.equal(((await discovery.json()) as { issuer: string }).issuer, server.url, 'oidc-provider answers discovery');
  t.notMatch(server.output(), /"level":"error"/, 'nothing failed on the way');
  t.equal(await server.stop(), 0);
});
