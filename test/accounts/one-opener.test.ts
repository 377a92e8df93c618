// One session opener (issue 73): every way in (a password, a password and its TOTP code, a password
// and a recovery code, the sign-in page's code step after the password, a passkey, an upstream
// provider, an upstream provider and the account's own TOTP step) opens its session through accounts/sessions.ts's openSession, from the facts of its
// sign-in, and a session opened from a signed-in one (a password change) carries the facts it
// had: the method, the second factor, and the upstream provider's own amr (which the actions'
// second opener used to drop). Checked twice: in the code (the only calls of the store's
// insertSession and of openSession), and in the sessions each way leaves (amr, acr, upstream_amr).
import t from 'tap';
import type { Page } from 'playwright-core';
import { amrProvider, browser as fetchBrowser } from '../helpers/amr-upstream';
import { freePort, launch } from '../helpers/browser';
import { callsOf } from '../helpers/calls';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { withAuthenticator } from '../helpers/passkeys';
import { PASSWORD, setSignup, startTestServer, TEST_STORE, tokenOf, type TestServer } from '../helpers/server';
import { acrOf, amrOf } from '../../src/accounts/assurance';
import type { SessionRow } from '../../src/store/sessions';

const MFA = 'https://refeds.org/profile/mfa';
const SFA = 'https://refeds.org/profile/sfa';

t.test('in the code: one opener writes every session, and only the sign-in routine and the carrying of a session call it', async (t) => {
  t.same(callsOf('insertSession'), ['accounts/sessions.ts:openSession'], "the store's session insert is the opener's alone");
  t.same(
    callsOf('openSession'),
    ['accounts/recovery.ts:openRecoveryLink', 'accounts/sessions.ts:reopenSession', 'accounts/signin.ts:signInProved'],
    // A recovery link is an administrator's one-time way back in (no password, no second factor
    // to ask): it opens its short session with the facts of its own, never through a sign-in.
    'the opener is called by the sign-in routine, reopenSession and the recovery link',
  );
});

/** The session a token names (its sid). */
async function sessionOfToken(s: TestServer, token: string): Promise<SessionRow> {
  const { sid } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { sid: string };
  return (await s.db('session').where({ id: sid }).first()) as SessionRow;
}

/** What a session says of its sign-in: its facts as the store keeps them, and as the protocols read them. */
const factsOf = (row: SessionRow) => ({
  method: row.method,
  two_factor: Boolean(row.two_factor),
  second_factor: row.second_factor,
  upstream_amr: row.upstream_amr === null ? null : (JSON.parse(row.upstream_amr) as string[]),
  amr: amrOf({ ...row, two_factor: Boolean(row.two_factor) }),
  acr: acrOf({ two_factor: Boolean(row.two_factor) }),
});

t.test('in the sessions: every way in leaves the facts of its sign-in, and a session opened from one carries them', async (t) => {
  // The clock held at the start of a TOTP step: each code below is for a step of its own.
  const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 1000);
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://localhost:${port}` }, undefined, { clock });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  const up = await amrProvider(t, 'gatehouse');
  up.amr = ['pwd', 'hwk'];
  const added = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'gatehouse', '--client-secret-env', 'S', '--trust-email'],
    { env: { S: 'a-secret' } },
  );
  t.equal(added.code, 0, added.err);

  // Ann: made by the provider, then given a password, a passkey and TOTP.
  t.equal((await fetchBrowser(s).throughProvider('corp')).status, 303, 'Ann signs up through the provider');
  await cli(s.dataDir, ['user', 'set-password', 'ann@example.com', '--password-env', 'P'], { env: { P: PASSWORD } });
  const passwordOnly = await s.signin('ann@example.com');
  const chromium = await launch(t);
  const key = await withAuthenticator(chromium);
  await key.page.goto(`${s.config.publicUrl}/ping`);
  await key.page.addScriptTag({ url: '/assets/webauthn.js' });
  const registered = await passkeyCall(key.page, 'register', passwordOnly);
  t.equal(registered, 200, 'a passkey added');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, passwordOnly);
  const secret: string = enrol.body[0].Attributes.secret;
  const confirmed = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, passwordOnly);
  t.equal(confirmed.status, 200, 'TOTP on');
  const recoveryCodes = (confirmed.body as Array<{ ResponseType: string; Attributes: { codes?: string[] } }>).find((i) => i.Attributes.codes)!.Attributes
    .codes!;
  const recovery = recoveryCodes[0]!;
  /** The sign-in page: the password, then its code step with `code`. */
  const onThePage = async (code: string) => {
    const b = fetchBrowser(s);
    await b.go('/signin');
    const asked = await b.form('/signin', { email: 'ann@example.com', password: PASSWORD });
    const step = /name="step" value="([^"]+)"/.exec(asked.text)?.[1];
    t.ok(step, 'the password was right: the code step');
    t.equal((await b.form('/signin/code', { step: step!, otp: code })).status, 303);
    return b.pageToken();
  };

  const password = { method: 'password', upstream_amr: null };
  const provider = { method: 'provider', upstream_amr: ['pwd', 'hwk'] };
  const ways: Array<[string, () => Promise<string>, object]> = [
    [
      'a password (an account without TOTP)',
      async () => s.signin('admin@example.com'),
      { ...password, two_factor: false, second_factor: null, amr: ['pwd'], acr: SFA },
    ],
    [
      'a password and its TOTP code',
      async () => {
        clock.advance(30_000);
        return tokenOf(await s.action('user_account', 'signin', { email: 'ann@example.com', password: PASSWORD, otp: await totpAt(secret, clock) }));
      },
      { ...password, two_factor: true, second_factor: 'otp', amr: ['pwd', 'otp', 'mfa'], acr: MFA },
    ],
    [
      'a password and a recovery code',
      async () => tokenOf(await s.action('user_account', 'signin', { email: 'ann@example.com', password: PASSWORD, recovery_code: recovery })),
      { ...password, two_factor: true, second_factor: 'otp', amr: ['pwd', 'otp', 'mfa'], acr: MFA },
    ],
    [
      'the sign-in page: a password, then its code step',
      async () => {
        clock.advance(30_000);
        return onThePage(await totpAt(secret, clock));
      },
      { ...password, two_factor: true, second_factor: 'otp', amr: ['pwd', 'otp', 'mfa'], acr: MFA },
    ],
    [
      'the sign-in page: a password, then a recovery code at its code step',
      async () => onThePage(recoveryCodes[1]!),
      { ...password, two_factor: true, second_factor: 'otp', amr: ['pwd', 'otp', 'mfa'], acr: MFA },
    ],
    [
      'a passkey',
      async () => (await passkeyCall(key.page, 'signin')) as string,
      { method: 'passkey', upstream_amr: null, two_factor: true, second_factor: null, amr: ['hwk', 'user', 'mfa'], acr: MFA },
    ],
    [
      "an upstream provider, then the account's TOTP step",
      async () => {
        clock.advance(30_000);
        const b = fetchBrowser(s);
        const asked = await b.throughProvider('corp');
        const pending = /name="pending" value="([^"]+)"/.exec(asked.text)![1]!;
        t.equal((await b.form('/signin/provider-code', { pending, otp: await totpAt(secret, clock) })).status, 303);
        return b.pageToken();
      },
      { ...provider, two_factor: true, second_factor: 'otp', amr: ['fed', 'pwd', 'hwk', 'otp', 'mfa'], acr: MFA },
    ],
  ];
  const tokens = new Map<string, string>();
  for (const [what, way, expected] of ways) {
    const token = await way();
    tokens.set(what, token);
    t.same(factsOf(await sessionOfToken(s, token)), expected, what);
  }

  // Bob has no TOTP: the provider alone signs him in.
  up.sub = 'sub-bob';
  up.email = 'bob@example.com';
  const bob = fetchBrowser(s);
  t.equal((await bob.throughProvider('corp')).status, 303);
  const bobToken = bob.pageToken();
  const upstream = { ...provider, two_factor: false, second_factor: null, amr: ['fed', 'pwd', 'hwk'], acr: SFA };
  t.same(factsOf(await sessionOfToken(s, bobToken)), upstream, 'an upstream provider');

  // Sessions opened from a signed-in one carry its facts: Bob, given a password by the shell (which
  // ends his sessions), signs in through the provider again and changes it there.
  await cli(s.dataDir, ['user', 'set-password', 'bob@example.com', '--password-env', 'P'], { env: { P: PASSWORD } });
  const again = fetchBrowser(s);
  t.equal((await again.throughProvider('corp')).status, 303);
  const changed = await changePassword(s, again.pageToken(), PASSWORD, `${PASSWORD} 2`);
  t.equal(changed.status, 200, changed.text);
  t.same(factsOf(await sessionOfToken(s, tokenOf(changed))), upstream, "a password change on the provider's session: the same facts, its amr kept");

  const annChanged = await changePassword(s, tokens.get("an upstream provider, then the account's TOTP step")!, PASSWORD, `${PASSWORD} 3`);
  t.equal(annChanged.status, 200, annChanged.text);
  t.same(
    factsOf(await sessionOfToken(s, tokenOf(annChanged))),
    { ...provider, two_factor: true, second_factor: 'otp', amr: ['fed', 'pwd', 'hwk', 'otp', 'mfa'], acr: MFA },
    'after the provider and the TOTP step: the same facts',
  );
});

const changePassword = (s: TestServer, token: string, current: string, password: string) =>
  s.action('user_account', 'change_password', { currentPassword: current, password, passwordConfirm: password }, token);

/** The passkey JSON actions, as an app's own page runs them: register (with a token; the status), or sign in (the new token). */
async function passkeyCall(page: Page, what: 'register' | 'signin', token?: string): Promise<number | string> {
  return page.evaluate(
    async ({ what, token }) => {
      const call = async (name: string, attributes: Record<string, unknown>) => {
        const r = await fetch(`/action/user_account/${name}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify({ attributes }),
        });
        return { status: r.status, body: (await r.json()) as Array<{ ResponseType: string; Attributes: { key?: string; value?: unknown } }> };
      };
      const W = (globalThis as unknown as { SimpleWebAuthnBrowser: Record<string, (o: unknown) => Promise<unknown>> }).SimpleWebAuthnBrowser;
      const options = await call('passkey_options', {});
      const optionsJSON = options.body.find((i) => i.Attributes.key === 'passkey_options')!.Attributes.value;
      if (what === 'register') return (await call('passkey_register', { response: await W.startRegistration!({ optionsJSON }), name: 'Laptop' })).status;
      const signed = await call('passkey_signin', { response: await W.startAuthentication!({ optionsJSON }) });
      return signed.body.find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === 'token')!.Attributes.value as string;
    },
    { what, token },
  );
}

t.test('a session that cannot be stored is no sign-in: no signin_ok recorded', async (t) => {
  // An outside attack saw signin_ok logged for sign-ins whose session write then failed (503).
  const s = await startTestServer(t);
  t.equal((await s.signup('ann@example.com')).status, 200, 'the first account');
  if (TEST_STORE === 'postgres') {
    await s.db.raw(`CREATE FUNCTION refuse_session() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'no room for sessions'; END $$ LANGUAGE plpgsql`);
    await s.db.raw('CREATE TRIGGER refuse_session BEFORE INSERT ON session FOR EACH ROW EXECUTE FUNCTION refuse_session()');
  } else {
    await s.db.raw("CREATE TRIGGER refuse_session BEFORE INSERT ON session BEGIN SELECT RAISE(ABORT, 'no room for sessions'); END");
  }
  const res = await s.action('user_account', 'signin', { email: 'ann@example.com', password: PASSWORD });
  t.not(res.status, 200, `the sign-in is refused (${res.status})`);
  t.equal(Number((await s.db('audit_event').where({ event: 'signin_ok' }).count({ n: '*' }).first())?.n), 0, 'no signin_ok recorded');
});
