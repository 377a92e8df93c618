// The libraries the executable compiles on first use (scripts/build.mjs bundles them apart, as
// SEA assets: src/native/lazy.ts) work from the packaged executable: the body parser (any POST),
// nodemailer (the verification mail, to a real SMTP server), qrcode (the TOTP page's QR code) and
// oidc-provider (discovery; the whole flow is test/e2e/oidc-executable.test.ts), and
// @simplewebauthn/server with its browser half (a passkey registered and used in Chromium), and
// openid-client (a sign-in through an upstream provider).
import t from 'tap';
import { freePort, launch } from '../helpers/browser';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { withAuthenticator } from '../helpers/passkeys';
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
  t.equal(((await discovery.json()) as { issuer: string }).issuer, server.publicUrl, 'oidc-provider answers discovery');
  t.notMatch(server.output(), /"level":"error"/, 'nothing failed on the way');
  t.equal(await server.stop(), 0);
});

t.test('passkeys inside the executable: the WebAuthn library and its browser half, in Chromium', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const server = await serveExe(t, exe, ['--data-dir', `${dir}/data`, '--port', String(port), '--public-url', base, '--no-rate-limits'], { env, cwd: dir });
  const call = async (name: string, attributes: Record<string, unknown>, token?: string) => {
    const r = await fetch(`${server.url}/action/user_account/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ attributes }),
    });
    return { status: r.status, body: (await r.json()) as Array<{ ResponseType: string; Attributes: { key?: string; value?: unknown } }> };
  };
  const stored = (items: Awaited<ReturnType<typeof call>>['body'], key: string) => items.find((i) => i.Attributes.key === key)?.Attributes.value;
  t.equal((await call('signup', { email: 'key@example.com', name: 'Key', password: PASSWORD, passwordConfirm: PASSWORD })).status, 200);
  const token = stored((await call('signin', { email: 'key@example.com', password: PASSWORD })).body, 'token') as string;

  const browser = await launch(t);
  const a = await withAuthenticator(browser);
  await a.page.goto(`${base}/ping`);
  await a.page.addScriptTag({ url: '/assets/webauthn.js' });
  const optionsJSON = stored((await call('passkey_options', {}, token)).body, 'passkey_options');
  t.match(optionsJSON, { rp: { id: 'localhost' }, challenge: String }, 'the library made registration options');
  const response = await a.page.evaluate((o) => (globalThis as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: o }), optionsJSON);
  const added = await call('passkey_register', { response, name: 'Packaged' }, token);
  t.equal(added.status, 200, 'and verified the registration');
  const signinOptions = stored((await call('passkey_options', {})).body, 'passkey_options');
  const assertion = await a.page.evaluate((o) => (globalThis as any).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: o }), signinOptions);
  const signedIn = await call('passkey_signin', { response: assertion });
  t.equal(signedIn.status, 200, 'and a sign-in');
  t.type(stored(signedIn.body, 'token'), 'string');
  t.notMatch(server.output(), /"level":"error"/, 'nothing failed on the way');
  t.equal(await server.stop(), 0);
});

t.test('sign in with another provider inside the executable: openid-client from its lazy asset', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const upstream = await startHostileUpstream(t, 'downstream');
  const server = await serveExe(t, exe, ['--data-dir', `${dir}/data`, '--no-rate-limits'], { env, cwd: dir });
  const added = await runExe(
    exe,
    ['--data-dir', `${dir}/data`, 'provider', 'add', '--name', 'up', '--issuer', upstream.issuer, '--client-id', 'downstream', '--client-secret-env', 'S'],
    {
      env: { ...env, S: 'secret' },
      cwd: dir,
    },
  );
  t.equal(added.code, 0, added.stderr);
  await runExe(exe, ['--data-dir', `${dir}/data`, 'action', 'set-permission', 'signup', '--guest', 'on'], { env, cwd: dir });
  const jar = new Map<string, string>();
  const go = async (url: string, init: RequestInit = {}) => {
    const own = url.startsWith(server.publicUrl);
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        ...(own ? { origin: server.publicUrl, cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
      },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
    return res;
  };
  await go(`${server.publicUrl}/signin`);
  const begun = await go(`${server.publicUrl}/signin/provider/up`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: jar.get('gatehouse_csrf') ?? '' }).toString(),
  });
  t.equal(begun.status, 303, 'discovery read, off to the provider');
  const back = await go(begun.headers.get('location')!);
  const landed = await go(back.headers.get('location')!);
  t.equal(landed.status, 303, 'the code exchanged and the ID token checked: signed in');
  t.equal(landed.headers.get('location'), '/account');
  t.notMatch(server.output(), /"level":"error"/, 'nothing failed on the way');
  t.equal(await server.stop(), 0);
});
