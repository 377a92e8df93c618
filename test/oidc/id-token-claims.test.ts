// Apps that read groups (or email, or name) from the ID token rather than userinfo: oauth2-proxy,
// Kubernetes' API server and others. OpenID Connect Core 5.4 puts what a scope asks for at
// userinfo once an access token is issued, and Gatehouse follows it; a client may choose claims
// its ID tokens carry as well (client add --id-token-claims, client set, the file's
// id_token_claims), each only when the scope that holds it was granted. A relying party nobody
// here wrote (openid-client) signs in, and jose checks and decodes the ID token.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { cli } from '../helpers/cli';
import { browser } from '../helpers/oidc-http';
import { providerWith, REDIRECT, relyingParty } from '../helpers/oidc';
import { PASSWORD, tempDir, type TestServer } from '../helpers/server';

/** Signs ada in on the pages, walks openid-client's authorization URL to the callback, exchanges the code. */
async function signIn(s: TestServer, config: oidc.Configuration, scope: string, extra: Record<string, string> = {}) {
  const request = browser(s.url);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await request('/signin')).text())![1];
  await request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email: 'ada@example.com', password: PASSWORD }).toString(),
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    state,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  let location = url.href;
  for (let i = 0; i < 10 && !location.startsWith(REDIRECT); i++) {
    const res = await request(location);
    await res.arrayBuffer();
    location = res.headers.get('location') ?? '';
    if (!location) throw new Error(`the authorization stopped at ${res.status}`);
  }
  return oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state });
}

/** The ID token's claims, its signature checked against the provider's published keys. */
async function idToken(s: TestServer, config: oidc.Configuration, token: string, clientId: string) {
  const keys = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
  const { payload } = await jwtVerify(token, keys, { issuer: s.config.publicUrl, audience: clientId });
  return payload as Record<string, unknown>;
}

const PERSON = ['email', 'email_verified', 'name', 'preferred_username', 'groups'];
/** The person's claims an ID token carries (sub and how they signed in left out). */
const personal = (claims: Record<string, unknown>) =>
  Object.keys(claims)
    .filter((k) => PERSON.includes(k))
    .sort();

t.test('a client that chose groups and email gets them in its ID tokens, each only with its scope', async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  for (const args of [
    ['group', 'create', 'staff'],
    ['group', 'create', 'engineering'],
    ['group', 'add-group', 'staff', 'engineering'],
    ['group', 'add', 'engineering', 'ada@example.com'],
  ]) {
    t.equal((await cli(s.dataDir, args)).code, 0, args.join(' '));
  }
  const add = async (...more: string[]) => {
    const r = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Proxy', '--redirect-uri', REDIRECT, '--first-party', ...more]);
    t.equal(r.code, 0, r.err);
    return r.json as { client_id: string; client_secret: string; id_token_claims: string[] };
  };
  const chose = await add('--id-token-claims', 'groups,email');
  t.same(chose.id_token_claims, ['email', 'groups'], 'kept in one order');
  const plain = await add();
  t.same(plain.id_token_claims, []);
  const shown = await cli(s.dataDir, ['client', 'show', chose.client_id]);
  t.match(shown.out, /^ID token claims: +email, groups$/m);

  const config = await relyingParty(s, chose);
  const all = await signIn(s, config, 'openid email profile groups offline_access', { prompt: 'consent' });
  const claims = await idToken(s, config, all.id_token!, chose.client_id);
  t.same(personal(claims), ['email', 'email_verified', 'groups'], 'the chosen claims (email brings email_verified), not name');
  t.equal(claims.email, 'ada@example.com');
  t.equal(claims.email_verified, false);
  t.same((claims.groups as string[]).sort(), ['engineering', 'staff', 'users'], 'groups by name, through nesting too');
  t.same(all.claims(), claims, "openid-client's reading of it agrees");
  const info = await oidc.fetchUserInfo(config, all.access_token, String(claims.sub));
  t.same(personal(info), PERSON.slice().sort(), 'userinfo still answers every claim');

  // Refreshed, the new ID token carries them too.
  const refreshed = await oidc.refreshTokenGrant(config, all.refresh_token!);
  t.same(personal(await idToken(s, config, refreshed.id_token!, chose.client_id)), ['email', 'email_verified', 'groups'], 'after a refresh');

  // Only what the granted scopes allow.
  t.same(personal(await idToken(s, config, (await signIn(s, config, 'openid')).id_token!, chose.client_id)), [], 'openid alone: none');
  t.same(
    personal(await idToken(s, config, (await signIn(s, config, 'openid email')).id_token!, chose.client_id)),
    ['email', 'email_verified'],
    'email: no groups',
  );
  t.same(
    personal(await idToken(s, config, (await signIn(s, config, 'openid groups profile')).id_token!, chose.client_id)),
    ['groups'],
    'no email scope: no email',
  );

  // A client that chose none: the ID token as before (the claims at userinfo), unless the claims parameter asks.
  const plainConfig = await relyingParty(s, plain);
  t.same(personal(await idToken(s, plainConfig, (await signIn(s, plainConfig, 'openid email profile groups')).id_token!, plain.client_id)), [], 'none chosen');
  const asked = await signIn(s, plainConfig, 'openid email profile groups', { claims: JSON.stringify({ id_token: { email: null } }) });
  t.same(personal(await idToken(s, plainConfig, asked.id_token!, plain.client_id)), ['email'], 'the claims parameter still asks for one');

  // client set changes them; the next ID token follows.
  const set = await cli(s.dataDir, ['--json', 'client', 'set', chose.client_id, '--id-token-claims', 'name,preferred_username']);
  t.equal(set.code, 0, set.err);
  t.same(set.json.id_token_claims, ['name', 'preferred_username']);
  t.same(personal(await idToken(s, config, (await signIn(s, config, 'openid email profile groups')).id_token!, chose.client_id)), [
    'name',
    'preferred_username',
  ]);
  t.equal((await cli(s.dataDir, ['client', 'set', chose.client_id, '--id-token-claims', ''])).code, 0);
  t.same(personal(await idToken(s, config, (await signIn(s, config, 'openid email profile groups')).id_token!, chose.client_id)), [], 'none again');
  const changes = (await cli(s.dataDir, ['--json', 'audit'])).json.events.filter((e: { event: string }) => e.event === 'client_changed');
  t.same(changes.map((e: { details: { id_token_claims: string } }) => e.details.id_token_claims).sort(), ['name,preferred_username', 'none'], 'audited');

  // Bad names and clients without a sign-in are refused, saying what would do.
  const bad = await cli(s.dataDir, ['client', 'set', chose.client_id, '--id-token-claims', 'groups,roles']);
  t.equal(bad.code, 2);
  t.match(bad.err, /--id-token-claims names claims from: email, email_verified, name, preferred_username, groups \(got roles\)/);
  const machine = await cli(s.dataDir, ['client', 'add', '--name', 'Job', '--credentials', '--id-token-claims', 'groups']);
  t.equal(machine.code, 2);
  t.match(machine.err, /--id-token-claims needs --redirect-uri or --device: only a person signing in gets an ID token/);
});

t.test('the configuration file sets them: id_token_claims, planned, applied, exported', async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  const write = (claims: string) =>
    fs.writeFileSync(
      file,
      `version: 1\noidc_clients:\n  - client_id: proxy\n    name: Proxy\n    public: true\n    first_party: true\n    redirect_uris: [${REDIRECT}]\n${claims}`,
    );
  write('    id_token_claims: [groups]\n');
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.same((await cli(s.dataDir, ['--json', 'client', 'show', 'proxy'])).json.id_token_claims, ['groups']);
  const config = await relyingParty(s, { client_id: 'proxy' });
  t.same(personal(await idToken(s, config, (await signIn(s, config, 'openid groups')).id_token!, 'proxy')), ['groups']);
  t.match((await cli(s.dataDir, ['config', 'export'])).out, /- client_id: proxy\n(?: {4}.*\n)* {4}id_token_claims:\n {6}- groups\n/);

  write('    id_token_claims: [groups, email]\n');
  const plan = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(plan.code, 2);
  t.equal(plan.out, '~ oidc_client proxy: id_token_claims: email, groups (was groups)\n');
  write('    id_token_claims: [roles]\n');
  const refused = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(refused.code, 1);
  t.match(refused.err, /gatehouse\.yaml:8:\d+: oidc_clients\[0\]\.id_token_claims\[0\] must be equal to one of the allowed values/);
});
