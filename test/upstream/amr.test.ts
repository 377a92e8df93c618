// What an upstream provider said of its own sign-in (the ID token's `amr`) is kept with the session
// it opens here, and apps signing in through Gatehouse's OpenID Connect provider see it after
// `fed`: RFC 8176's registered values only, `mfa` never taken on the provider's word, at most ten
// short values read. The same after the account's own TOTP step, which adds `otp` and `mfa`.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { manualClock, totpAt } from '../helpers/clock';
import { addClient, REDIRECT } from '../helpers/oidc';
import { token } from '../helpers/oidc-http';
import { PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';

/** A small honest provider (jose, node:http) whose ID tokens carry the `amr` a test sets. */
async function amrProvider(t: Test, clientId: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, string>();
  const state = { issuer: '', amr: undefined as unknown, sub: 'sub-1', email: 'ann@example.com' };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', state.issuer);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration')
      return json({
        issuer: state.issuer,
        authorization_endpoint: `${state.issuer}/authorize`,
        token_endpoint: `${state.issuer}/token`,
        jwks_uri: `${state.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(12).toString('hex');
      codes.set(code, url.searchParams.get('nonce') ?? '');
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', state.issuer);
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const code = new URLSearchParams(body).get('code') ?? '';
      const nonce = codes.get(code);
      codes.delete(code);
      if (nonce === undefined) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = { nonce, email: state.email, email_verified: true, name: 'Ann' };
      if (state.amr !== undefined) claims.amr = state.amr;
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(state.issuer)
        .setAudience(clientId)
        .setSubject(state.sub)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}

/** A browser: one cookie jar for Gatehouse, redirects followed by hand (to the provider too). */
function browser(s: TestServer) {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const target = url.startsWith(s.config.publicUrl) ? s.url + url.slice(s.config.publicUrl.length) : url.startsWith('/') ? s.url + url : url;
    const own = target.startsWith(s.url);
    const res = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(own ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  };
  const form = (url: string, fields: Record<string, string>) =>
    go(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ csrf: cookies.get('gatehouse_csrf') ?? '', ...fields }).toString(),
    });
  /** "Continue with …" on the sign-in page, through the provider, to the page the callback shows. */
  const throughProvider = async (name: string) => {
    await go('/signin');
    const started = await form(`/signin/provider/${name}`, {});
    const back = await go(started.location!);
    return go(back.location!);
  };
  /** An OpenID Connect authorization for `clientId` (PKCE), walked to its code, then the ID token's claims. */
  const idTokenFor = async (client: { client_id: string; client_secret?: string }) => {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: client.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    let location = `/oidc/auth?${params}`;
    for (let hops = 0; hops < 10 && !location.startsWith(REDIRECT); hops++) {
      const r = await go(location);
      if (!r.location) throw new Error(`the authorization stopped at ${r.status}: ${r.text.slice(0, 300)}`);
      location = r.location;
    }
    const code = new URL(location).searchParams.get('code');
    if (!code) throw new Error(`no code: ${location}`);
    const issued = await token(s.url, client as { client_id: string; client_secret: string }, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    if (issued.status !== 200) throw new Error(JSON.stringify(issued.json));
    return JSON.parse(Buffer.from(issued.json.id_token!.split('.')[1]!, 'base64url').toString('utf8')) as { amr: string[] };
  };
  return { go, form, throughProvider, idTokenFor };
}

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
