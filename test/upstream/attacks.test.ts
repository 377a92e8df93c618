// Sign in with another provider, under attack: a hostile upstream (test/helpers/hostile-upstream.ts)
// answers with a wrong issuer, audience, nonce or signature, an expired ID token, an error for a
// code of another client, junk, or nothing at all; states are forged, replayed, or carried to
// another browser. Each is refused with a clear page; nothing is linked and nothing is created.
import t from 'tap';
import { cli } from '../helpers/cli';
import { countRows, setSignup, startTestServer } from '../helpers/server';
import { type Mode, startHostileUpstream, upstreamJar } from '../helpers/hostile-upstream';

t.test('a hostile upstream: every lie refused with a clear page, nothing linked or created', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057); // even with signup open
  const evil = await startHostileUpstream(t, 'gatehouse-client');
  const added = await cli(
    s.dataDir,
    [
      'provider',
      'add',
      '--name',
      'evil',
      '--issuer',
      evil.issuer,
      '--client-id',
      'gatehouse-client',
      '--client-secret-env',
      'S',
      '--display-name',
      'Evil Corp',
    ],
    {
      env: { S: 'a-secret' },
    },
  );
  t.equal(added.code, 0, added.err);
  const before = { accounts: await countRows(s, 'user_account'), identities: await countRows(s, 'linked_identity') };

  // The page says it in the reader's words (the audit's signin_failed keeps the reason: upstream_answer).
  const lies: Array<[Mode, RegExp]> = [
    ['wrong_iss', /did not sign you in/],
    ['wrong_aud', /did not sign you in/],
    ['wrong_nonce', /did not sign you in/],
    ['bad_sig', /did not sign you in/],
    ['expired', /did not sign you in/],
    ['other_client_code', /did not sign you in/],
    ['junk_token', /did not sign you in|did not answer/],
  ];
  for (const [mode, words] of lies) {
    evil.mode = mode;
    const b = upstreamJar(s);
    const { callback } = await b.throughUpstream('evil');
    t.ok(callback?.startsWith(`${s.config.publicUrl}/signin/provider/evil/callback`), `${mode}: back at the callback`);
    const landed = await b.go(callback!.replace(s.config.publicUrl, s.url));
    t.ok(landed.status >= 400 && landed.status < 500, `${mode}: refused (${landed.status})`);
    t.match(landed.text, words, `${mode}: says why, in words`);
    t.notOk([...b.cookies.keys()].some((k) => k.includes('session')) && b.cookies.get('gatehouse_session'), `${mode}: no session cookie`);
  }
  t.same({ accounts: await countRows(s, 'user_account'), identities: await countRows(s, 'linked_identity') }, before, 'nothing created, nothing linked');

  // The harness itself is honest: the same upstream telling the truth signs a new person up.
  evil.mode = 'good';
  const honest = upstreamJar(s);
  const { callback } = await honest.throughUpstream('evil');
  const signedIn = await honest.go(callback!.replace(s.config.publicUrl, s.url));
  t.equal(signedIn.status, 303, 'a truthful answer signs in');
  t.equal(await countRows(s, 'linked_identity'), 1);

  // A replayed state: the same callback again.
  const replay = await honest.go(callback!.replace(s.config.publicUrl, s.url));
  t.equal(replay.status, 400);
  t.match(replay.text, /start again/);
  // A forged state, and a state carried to another browser (no flow cookie there).
  const forged = await upstreamJar(s).go(`${s.url}/signin/provider/evil/callback?code=x&state=forged`);
  t.equal(forged.status, 400);
  evil.mode = 'good';
  evil.sub = 'sub-2';
  const victim = upstreamJar(s);
  const carried = await victim.throughUpstream('evil');
  const attacker = upstreamJar(s);
  await attacker.go(`${s.url}/signin`);
  const stolen = await attacker.go(carried.callback!.replace(s.config.publicUrl, s.url));
  t.equal(stolen.status, 400, "another browser's callback finds no flow");
  t.equal(await countRows(s, 'linked_identity'), 1, 'nothing linked by it');

  // The audit and the metrics say what happened.
  const failures = await s.db('audit_event').where({ event: 'signin_failed' });
  t.ok(failures.filter((f: { details: string }) => JSON.parse(f.details).method === 'provider').length >= lies.length);
  const metrics = await s.call('GET', '/metrics', { token: await s.signin('admin@example.com') });
  t.match(metrics.text, /gatehouse_provider_signins_total\{provider="evil",outcome="refused"\} [1-9]/);
  t.match(metrics.text, /gatehouse_provider_signins_total\{provider="evil",outcome="ok"\} 1/);
});

t.test('an upstream that is down, hangs or answers junk: a clear page, no hung request, no 500', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const evil = await startHostileUpstream(t, 'c');
  t.equal(
    (await cli(s.dataDir, ['provider', 'add', '--name', 'evil', '--issuer', evil.issuer, '--client-id', 'c', '--client-secret-env', 'S'], { env: { S: 'x' } }))
      .code,
    0,
  );
  t.equal(
    (
      await cli(s.dataDir, ['provider', 'add', '--name', 'gone', '--issuer', 'http://127.0.0.1:9', '--client-id', 'c', '--client-secret-env', 'S'], {
        env: { S: 'x' },
      })
    ).code,
    0,
  );
  for (const [name, mode] of [
    ['gone', 'good'],
    ['evil', 'junk_discovery'],
    ['evil', 'hang_discovery'],
  ] as const) {
    evil.mode = mode;
    const started = await upstreamJar(s).begin(name);
    t.equal(started.status, 503, `${name} ${mode}: 503`);
    t.match(started.text, /did not answer as a sign-in provider should/);
  }
  // Discovery answers, the token endpoint hangs: the callback gives up with a clear page.
  evil.mode = 'good';
  const b = upstreamJar(s);
  const { callback } = await b.throughUpstream('evil');
  evil.mode = 'hang_token';
  const landed = await b.go(callback!.replace(s.config.publicUrl, s.url));
  t.equal(landed.status, 503);
  t.match(landed.text, /did not answer/);
  t.equal(await countRows(s, 'linked_identity'), 0);
});

t.test(
  'issue 34, attack review: a trusted, verified upstream email never takes over a local account that did not prove that address (pre-hijacking)',
  async (t) => {
    const s = await startTestServer(t);
    await s.signup('admin@example.com');
    await setSignup(s, await s.signin('admin@example.com'), 2097057);
    // Mallory signs up here first with Victor's address (never confirmed) and keeps the password.
    await s.signup('victor@example.com');
    const up = await startHostileUpstream(t, 'gatehouse-client');
    const added = await cli(
      s.dataDir,
      ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S', '--trust-email'],
      {
        env: { S: 'a-secret' },
      },
    );
    t.equal(added.code, 0, added.err);
    // Victor signs in at the trusted provider, which vouches for his address.
    up.email = 'victor@example.com';
    up.emailVerified = true;
    up.sub = 'victor-at-corp';
    const victor = upstreamJar(s);
    const { callback } = await victor.throughUpstream('corp');
    const landed = await victor.go(callback!.replace(s.config.publicUrl, s.url));
    t.equal(landed.status, 403, 'refused: not linked to the account Mallory made');
    t.match(landed.text, /Sign in to it first/);
    t.equal(await countRows(s, 'linked_identity'), 0, 'nothing linked');
    t.notOk(victor.cookies.get('gatehouse_session'), 'not signed in');

    // Once the address is proved here (a reset link, the verification link), the trusted email links.
    await s.db('user_account').where({ email_key: 'victor@example.com' }).update({ email_verified: true });
    const again = upstreamJar(s);
    const second = await again.throughUpstream('corp');
    const linked = await again.go(second.callback!.replace(s.config.publicUrl, s.url));
    t.equal(linked.status, 303, linked.text);
    t.equal(await countRows(s, 'linked_identity'), 1, 'linked to the proved account');
  },
);

t.test('issue 35: a disabled account signing in through a provider is a failed sign-in, as with a password or a passkey', async (t) => {
  const s = await startTestServer(t, { publicMetrics: true });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  const up = await startHostileUpstream(t, 'gatehouse-client');
  t.equal(
    (
      await cli(s.dataDir, ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S'], {
        env: { S: 'x' },
      })
    ).code,
    0,
  );
  up.email = 'nina@example.com';
  up.sub = 'nina-at-corp';
  const first = upstreamJar(s);
  const made = await first.go((await first.throughUpstream('corp')).callback!.replace(s.config.publicUrl, s.url));
  t.equal(made.status, 303, 'a new account through the provider');
  t.equal((await cli(s.dataDir, ['user', 'disable', 'nina@example.com'])).code, 0);
  const metrics = () => s.core.metrics({ token: null, client: '127.0.0.1', userAgent: null });
  const before = (await metrics()).signinsFailed;
  const again = upstreamJar(s);
  const refused = await again.go((await again.throughUpstream('corp')).callback!.replace(s.config.publicUrl, s.url));
  t.equal(refused.status, 403);
  t.match(refused.text, /this account is disabled/i);
  t.equal((await metrics()).signinsFailed, before + 1, 'counted as a failed sign-in');
  const audit = await s.db('audit_event').where({ event: 'signin_failed' }).orderBy('id', 'desc').first();
  t.match(JSON.parse(audit.details), { method: 'provider', provider: 'corp', reason: 'disabled' });
});
