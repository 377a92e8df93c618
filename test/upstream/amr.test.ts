// What an upstream provider said of its own sign-in (the ID token's `amr`) is kept with the session
// it opens here, and apps signing in through Gatehouse's OpenID Connect provider see it after
// `fed`: RFC 8176's registered values only, `mfa` never taken on the provider's word, at most ten
// short values read. The same after the account's own TOTP step, which adds `otp` and `mfa`.
import t, { type Test } from 'tap';
import { amrProvider, browser } from '../helpers/amr-upstream';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { addClient } from '../helpers/oidc';
import { PASSWORD, setSignup, startTestServer } from '../helpers/server';

async function setUp(t: Test, clock = manualClock()) {
  const s = await startTestServer(t, {}, undefined, { clock });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  const up = await amrProvider(t, 'gatehouse');
  const added = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'gatehouse', '--client-secret-env', 'S', '--trust-email'],
    { env: { S: 'a-secret' } },
  );
  t.equal(added.code, 0, added.err);
  const client = await addClient(s, '--first-party');
  return { s, up, client, clock };
}

t.test("an ID token after an upstream sign-in says amr ['fed', …the provider's registered values]", async (t) => {
  const { s, up, client } = await setUp(t);
  const cases: Array<[string, unknown, string[]]> = [
    ['password and a code upstream: its mfa is not taken on its word', ['pwd', 'otp', 'mfa'], ['fed', 'pwd', 'otp']],
    ['a hardware key upstream', ['hwk', 'user'], ['fed', 'hwk', 'user']],
    ['no amr at all', undefined, ['fed']],
    ['unregistered and malformed values are not repeated', ['pwd', 'x-corp-badge', 42, '', 'a'.repeat(500), { pwd: 1 }], ['fed', 'pwd']],
    ['not a list', 'pwd', ['fed']],
    ['only the first ten values are read', [...Array.from({ length: 10 }, (_, i) => `custom-${i}`), 'pwd'], ['fed']],
  ];
  for (const [i, [what, amr, expected]] of cases.entries()) {
    up.amr = amr;
    up.sub = `sub-${i}`;
    up.email = `person${i}@example.com`;
    const b = browser(s);
    const landed = await b.throughProvider('corp');
    t.equal(landed.status, 303, `${what}: signed in (${landed.text.slice(0, 200)})`);
    const claims = await b.idTokenFor(client);
    t.same(claims.amr, expected, `${what}: amr ${JSON.stringify(expected)}`);
  }
  const kept = await s.db('session').whereNotNull('upstream_amr').select('upstream_amr');
  t.ok(
    kept.every((r: { upstream_amr: string }) => (JSON.parse(r.upstream_amr) as string[]).length <= 10),
    'the session keeps at most ten values',
  );
});

t.test("after the account's own TOTP step the provider's amr is still there, with otp and mfa", async (t) => {
  // The server's clock held at the start of a TOTP step: each code below is for a step of its own.
  const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 1000);
  const { s, up, client } = await setUp(t, clock);
  up.amr = ['pwd', 'hwk'];
  // Ann signs up here by the provider, then turns TOTP on.
  const first = browser(s);
  t.equal((await first.throughProvider('corp')).status, 303);
  const own = await s.db('user_account').where({ email_key: 'ann@example.com' }).first();
  t.ok(own, 'the account the provider made');
  // A password for Ann, so the API's TOTP enrolment (which asks for it) can run as her.
  await cli(s.dataDir, ['user', 'set-password', 'ann@example.com', '--password-env', 'P'], { env: { P: PASSWORD } });
  const annToken = await s.signin('ann@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, annToken);
  t.equal(enrol.status, 200, enrol.text);
  const secret: string = enrol.body[0].Attributes.secret;
  const confirmed = await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, annToken);
  t.equal(confirmed.status, 200, confirmed.text);
  clock.advance(30_000);

  const b = browser(s);
  const asked = await b.throughProvider('corp');
  t.match(asked.text, /name="otp"/, 'the account asks for its own code after the provider');
  const pending = /name="pending" value="([^"]+)"/.exec(asked.text)![1]!;
  const done = await b.form('/signin/provider-code', { pending, otp: await totpAt(secret, clock) });
  t.equal(done.status, 303, `the code signs in (${done.text.slice(0, 300)})`);
  const claims = await b.idTokenFor(client);
  t.same(claims.amr, ['fed', 'pwd', 'hwk', 'otp', 'mfa'], "the provider's amr, then this account's code");
});
