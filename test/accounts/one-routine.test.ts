// The one sign-in routine (issue 46): every way in (a password, a passkey, another provider, an
// LDAP bind) is run through the same table of account states (disabled, locked, an unconfirmed
// address under --require-verified-email, a second factor, passkey-only), and each answers as the
// table says, with the same reason in the audit. The ways are the real ones: the signin action
// over HTTP, Chromium's WebAuthn on the pages, a second Gatehouse as the upstream provider,
// ldapts binding to the directory.
import t from 'tap';
import { Client } from 'ldapts';
import type { Page } from 'playwright-core';
import { startLdap } from '../../src/ldap/server';
import { freePort, launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { fillSignin } from '../helpers/oidc';
import { withAuthenticator } from '../helpers/passkeys';
import { errorCode, PASSWORD, startTestServer, type TestServer } from '../helpers/server';

const BASE = 'dc=example,dc=com';
const STATES = ['disabled', 'locked', 'unverified', 'twofactor', 'passkeyonly'] as const;
type State = (typeof STATES)[number];
const WAYS = ['passkey', 'provider', 'password', 'ldap'] as const;
type Way = (typeof WAYS)[number];
type Outcome = 'signed_in' | 'second_factor' | 'refused';

/** What each way answers for each state: the outcome and the audit's reason for a refusal (- when none is audited). */
const EXPECTED: Record<State, Record<Way, [Outcome, string]>> = {
  disabled: { passkey: ['refused', 'disabled'], provider: ['refused', 'disabled'], password: ['refused', 'disabled'], ldap: ['refused', 'disabled'] },
  // The gate refuses before any proof: nothing is audited per attempt (the lockout was).
  locked: { passkey: ['refused', '-'], provider: ['refused', '-'], password: ['refused', '-'], ldap: ['refused', '-'] },
  unverified: { passkey: ['refused', 'unverified'], provider: ['refused', 'unverified'], password: ['refused', 'unverified'], ldap: ['refused', 'unverified'] },
  // A passkey is both factors; a provider's sign-in and a password ask for the code; a password never binds past it.
  twofactor: { passkey: ['signed_in', '-'], provider: ['second_factor', '-'], password: ['second_factor', '-'], ldap: ['refused', 'app_password_required'] },
  passkeyonly: {
    passkey: ['signed_in', '-'],
    provider: ['signed_in', '-'],
    password: ['refused', 'wrong_password'],
    ldap: ['refused', 'app_password_required'],
  },
};

t.test('every way in runs the same routine: one table of account states, the same answers', async (t) => {
  const clock = manualClock();
  // The upstream: a second Gatehouse with the same people.
  const upPort = await freePort();
  const up = await startTestServer(t, { port: upPort, publicUrl: `http://127.0.0.1:${upPort}`, rateLimits: false });
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const s: TestServer = await startTestServer(
    t,
    { port, publicUrl: base, requireVerifiedEmail: true, rateLimits: false, signinFailuresPerAccount: 3 },
    undefined,
    { clock },
  );
  const client = (
    await cli(up.dataDir, ['--json', 'client', 'add', '--name', 'Here', '--redirect-uri', `${base}/signin/provider/upstream/callback`, '--first-party'])
  ).json;
  const added = await cli(
    s.dataDir,
    [
      'provider',
      'add',
      '--name',
      'upstream',
      '--issuer',
      up.config.publicUrl,
      '--client-id',
      client.client_id,
      '--client-secret-env',
      'S',
      '--display-name',
      'Upstream',
    ],
    { env: { S: client.client_secret, GATEHOUSE_PUBLIC_URL: base } },
  );
  t.equal(added.code, 0, added.err);
  const ldap = await startLdap(
    s.core,
    { host: '127.0.0.1', port: 0, tlsPort: null, tls: null, baseDn: BASE, readers: [], allowInsecureBind: false },
    s.core.logger,
  );
  t.teardown(() => ldap.close());
  // The first account is the administrator (who may not be disabled while the only one).
  await cli(s.dataDir, ['user', 'create', '--email', 'admin@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });

  const browser = await launch(t);
  // Each account: a password, a passkey (in its own authenticator) and a linked upstream sign-in.
  const keys = new Map<State, Page>();
  for (const state of STATES) {
    const email = `${state}@example.com`;
    for (const server of [s, up])
      t.equal((await cli(server.dataDir, ['user', 'create', '--email', email, '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
    await s.db('user_account').where({ email_key: email }).update({ email_verified: true });
    // The virtual authenticator lives on this page (its DevTools session): the passkey way uses it again.
    const { page } = await withAuthenticator(browser);
    keys.set(state, page);
    await page.goto(`${base}/signin`);
    await fillSignin(page, email);
    await page.waitForURL(`${base}/account**`);
    await page.getByLabel('Name of the new passkey').fill('Laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.waitForURL(/done=passkey_added/);
    await page.getByRole('button', { name: 'Link Upstream' }).click();
    await page.waitForURL((u) => u.host !== new URL(base).host || /done=linked/.test(u.search));
    if (!page.url().startsWith(base)) await fillSignin(page, email);
    await page.waitForURL(/done=linked/);
    // Signed out here (the passkey and the link stay), still signed in upstream.
    await page.context().clearCookies({ domain: 'localhost' });
  }

  // The states.
  await cli(s.dataDir, ['user', 'disable', 'disabled@example.com']);
  for (let i = 0; i < 3; i++) await s.action('user_account', 'signin', { email: 'locked@example.com', password: 'not the password' });
  await s.db('user_account').where({ email_key: 'unverified@example.com' }).update({ email_verified: false });
  const token = await s.signin('twofactor@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, token);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  t.equal((await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, token)).status, 200);
  clock.advance(30_000);
  await s.db('user_account').where({ email_key: 'passkeyonly@example.com' }).update({ password: '' });

  /** One attempt of one way for one state's account. */
  const attempt = async (state: State, way: Way): Promise<Outcome> => {
    const email = `${state}@example.com`;
    if (way === 'password') {
      const r = await s.action('user_account', 'signin', { email, password: PASSWORD });
      if (r.status === 200) return 'signed_in';
      return errorCode(r) === 'otp_required' ? 'second_factor' : 'refused';
    }
    if (way === 'ldap') {
      const c = new Client({ url: `ldap://127.0.0.1:${ldap.port}`, timeout: 5000 });
      try {
        await c.bind(`uid=${state},ou=people,${BASE}`, PASSWORD);
        return 'signed_in';
      } catch {
        return 'refused';
      } finally {
        await c.unbind().catch(() => undefined);
      }
    }
    const page: Page = way === 'passkey' ? keys.get(state)! : await (await browser.newContext()).newPage();
    try {
      await page.goto(`${base}/signin`);
      if (way === 'provider') {
        await page.getByRole('button', { name: 'Continue with Upstream' }).click();
        await page.waitForURL((u) => u.host !== new URL(base).host || u.pathname !== '/signin', { timeout: 5000 }).catch(() => undefined);
        if (!page.url().startsWith(base)) await fillSignin(page, email);
      }
      // A passkey: the page asks for one as it opens (autofill, conditional mediation) and the
      // virtual authenticator answers at once. Either way: signed in, a code asked, or a refusal.
      const shown = await Promise.race([
        page.waitForURL(`${base}/account**`, { timeout: 8000 }).then(() => 'signed_in' as const),
        page
          .locator('input[name=otp]')
          .waitFor({ timeout: 8000 })
          .then(() => 'second_factor' as const),
        page
          .getByRole('alert')
          .first()
          .waitFor({ timeout: 8000 })
          .then(() => 'refused' as const),
      ]).catch(() => 'refused' as const);
      if (process.env.DEBUG_ROUTINE)
        console.error(state, way, shown, page.url(), (await page.locator('body').textContent())?.replace(/\s+/g, ' ').slice(0, 300));
      return shown;
    } finally {
      if (way !== 'passkey') await page.close();
    }
  };

  for (const state of STATES) {
    const account = await s
      .db('user_account')
      .where({ email_key: `${state}@example.com` })
      .first();
    for (const way of WAYS) {
      const before = Number((await s.db('audit_event').where({ event: 'signin_failed', account: account.reference_id }).count({ n: '*' }).first())?.n);
      const outcome = await attempt(state, way);
      const after = Number((await s.db('audit_event').where({ event: 'signin_failed', account: account.reference_id }).count({ n: '*' }).first())?.n);
      const last = await s.db('audit_event').where({ event: 'signin_failed', account: account.reference_id }).orderBy('id', 'desc').first();
      const details = last ? (typeof last.details === 'string' ? JSON.parse(last.details) : last.details) : {};
      const audited = after > before ? String(details.reason) : '-';
      const [wantOutcome, wantReason] = EXPECTED[state][way];
      t.same([outcome, audited], [wantOutcome, wantReason], `${state} × ${way}: ${outcome}${audited === '-' ? '' : ` (${audited})`}`);
      if (after > before) t.equal(details.method ?? 'password', way, `${state} × ${way}: the audit names the way`);
    }
  }
});
