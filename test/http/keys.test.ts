// Tokens any backend can verify: a backend written with `jose` (nobody here wrote it) checks
// Gatehouse's tokens with the JWKS alone, before and after `keys rotate`; a retired key's tokens
// are refused at once; a store upgraded from HS256 honours its old tokens and issues no new one.
import { createHmac, randomBytes } from 'node:crypto';
import t from 'tap';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { cli } from '../helpers/cli';
import { errorCode, startTestServer, withAdmin } from '../helpers/server';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

t.test('a jose backend verifies tokens with the JWKS, across a rotation; retire refuses at once', async (t) => {
  const s = await withAdmin(t);
  // A second instance on the same store: keys are shared, and a rotation is seen by both.
  const other = await startTestServer(t, {}, s.dataDir);
  const jwks = await s.call('GET', '/.well-known/jwks.json');
  t.equal(jwks.status, 200);
  t.match(jwks.headers.get('content-type'), /application\/jwk-set\+json/);
  t.equal(jwks.body.keys.length, 1);
  const [published] = jwks.body.keys;
  t.match(published, { kty: 'RSA', alg: 'RS256', use: 'sig', kid: String });
  for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) t.notOk(Object.hasOwn(published, secret), `no private member ${secret}`);
  t.equal(decodeProtectedHeader(s.adminToken).kid, published.kid);

  // The backend: fetches the JWKS from Gatehouse, verifies signature, issuer and times.
  // (jose refetches a JWKS for an unknown kid at most every cooldownDuration, 30 s by default.)
  const backend = createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`), { cooldownDuration: 0 });
  const verify = (token: string) => jwtVerify(token, backend, { issuer: s.config.publicUrl, algorithms: ['RS256', 'ES256'] });
  const before = await verify(s.adminToken);
  t.equal(before.payload.email, 'admin@example.com');

  const rotated = await cli(s.dataDir, ['--json', 'keys', 'rotate']);
  t.equal(rotated.code, 0, rotated.err);
  t.match(rotated.json, { kid: String, alg: 'RS256', retired: [published.kid] });
  const fresh = await other.signin('admin@example.com');
  t.equal(decodeProtectedHeader(fresh).kid, rotated.json.kid, 'the other instance signs with the new key at once');
  t.equal((await verify(fresh)).payload.sub, before.payload.sub, 'the backend verifies the new key (jose refetches the JWKS for an unknown kid)');
  t.ok(await verify(s.adminToken), 'and still the token the old key signed');
  t.equal((await s.call('GET', '/api/me', { token: s.adminToken })).status, 200, 'Gatehouse too');
  const both = (await s.call('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
  t.same(both.sort(), [published.kid, rotated.json.kid].sort(), 'both keys are published');

  const listed = await cli(s.dataDir, ['--json', 'keys', 'list']);
  t.match(listed.json.keys, [
    { kid: rotated.json.kid, state: 'signing', verify_until: null },
    { kid: published.kid, state: 'verifying', verify_until: String },
  ]);
  t.match((await cli(s.dataDir, ['keys', 'list'])).out, /^KID\s+ALG\s+STATE\s+CREATED\s+VERIFIES UNTIL/);

  // Retire: a leaked old key's tokens are refused by every instance on the next request.
  const active = await cli(s.dataDir, ['--json', 'keys', 'retire', rotated.json.kid]);
  t.equal(active.code, 2, 'the signing key cannot be retired (rotate first)');
  t.equal((await cli(s.dataDir, ['keys', 'retire', 'nope'])).code, 4, 'an unknown kid: exit 4');
  // A kid of an older store may begin with a dash: the shell reads it as an option unless it
  // comes after '--', and the refusal says so.
  const dashed = await cli(s.dataDir, ['keys', 'retire', '-Xy3kidofanolderstore']);
  t.equal(dashed.code, 2);
  t.match(dashed.err, /unknown option '-Xy3kidofanolderstore': an argument that begins with '-' goes after '--'/);
  t.equal((await cli(s.dataDir, ['keys', 'retire', '--', '-Xy3kidofanolderstore'])).code, 4, "after '--' it is a kid (unknown here: exit 4)");
  const retired = await cli(s.dataDir, ['--json', 'keys', 'retire', published.kid]);
  t.equal(retired.code, 0, retired.err);
  t.equal(retired.json.key.state, 'retired');
  for (const server of [s, other]) {
    const r = await server.call('GET', '/api/me', { token: s.adminToken });
    t.equal(r.status, 401, 'a retired key’s token is refused at once');
    t.equal(errorCode(r), 'invalid_token');
    t.equal((await server.call('GET', '/api/me', { token: fresh })).status, 200, 'the new key’s token works');
  }
  const after = (await s.call('GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
  t.same(after, [rotated.json.kid], 'the retired key left the JWKS');
  const events = ((await cli(s.dataDir, ['--json', 'audit'])).json.events as Array<{ event: string }>).map((e) => e.event);
  t.ok(events.includes('key_rotated') && events.includes('key_retired'), 'both audited');
  t.notMatch(JSON.stringify([listed.json, rotated.json, s.logs]), /PRIVATE KEY/, 'no private key printed or logged');
});

t.test('ES256 on request; a bad --alg is refused', async (t) => {
  const s = await withAdmin(t);
  t.equal((await cli(s.dataDir, ['keys', 'rotate', '--alg', 'HS256'])).code, 2);
  const r = await cli(s.dataDir, ['--json', 'keys', 'rotate', '--alg', 'ES256']);
  t.equal(r.code, 0, r.err);
  const token = await s.signin('admin@example.com');
  t.match(decodeProtectedHeader(token), { alg: 'ES256', kid: r.json.kid });
  const jwks = createLocalJWKSet((await s.call('GET', '/.well-known/jwks.json')).body);
  t.equal((await jwtVerify(token, jwks, { issuer: s.config.publicUrl })).payload.email, 'admin@example.com');
  t.equal((await s.call('GET', '/api/me', { token })).status, 200);
});

t.test('a store upgraded from HS256 accepts its earlier tokens until they expire, and signs no more', async (t) => {
  const first = await withAdmin(t);
  // The store as the HS256 release left it: the secret, and its tokens signed before the upgrade.
  const secret = randomBytes(32);
  const issuedBefore = Date.now();
  await first.db('gatehouse_setting').insert([
    { name: 'jwt_secret', value: secret.toString('base64') },
    { name: 'jwt_secret_issued_before', value: String(issuedBefore) },
  ]);
  const s = await startTestServer(t, {}, first.dataDir);
  const me = (await s.call('GET', '/api/me', { token: first.adminToken })).body.data;
  const now = Math.floor(issuedBefore / 1000) - 60;
  const legacy = (claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }) => {
    const head = b64(header);
    const body = b64({
      iss: 'gatehouse',
      sub: me.id,
      email: 'admin@example.com',
      name: 'admin',
      iat: now,
      nbf: now,
      exp: now + 3000,
      jti: 'x',
      auth_version: 1,
      ...claims,
    });
    return `${head}.${body}.${createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')}`;
  };
  t.equal((await s.call('GET', '/api/me', { token: legacy({}) })).status, 200, 'an HS256 token from before the upgrade works');
  const refused = {
    expired: legacy({ iat: now - 90000, nbf: now - 90000, exp: now - 3600 }),
    'issued after the upgrade': legacy({ iat: now + 3600, nbf: now + 3600 }),
    'with a kid': legacy({}, { alg: 'HS256', typ: 'JWT', kid: 'x' }),
    'the new issuer': legacy({ iss: s.config.publicUrl }),
    // Attack review, item 11: an exp ten years out was honoured.
    'exp ten years out': legacy({ exp: now + 10 * 365 * 86400 }),
    'exp past the upgrade plus the token lifetime': legacy({ exp: Math.floor(issuedBefore / 1000) + 3600 + 120 }),
  };
  for (const [what, token] of Object.entries(refused)) t.equal((await s.call('GET', '/api/me', { token })).status, 401, `${what}: refused`);
  t.equal(decodeProtectedHeader(await s.signin('admin@example.com')).alg, 'RS256', 'signin issues RS256');

  // Once nothing it signed can be valid, the secret is deleted.
  await s.core.prune();
  t.equal((await s.db('gatehouse_setting').where({ name: 'jwt_secret' })).length, 1, 'kept while its tokens may live');
  await s
    .db('gatehouse_setting')
    .where({ name: 'jwt_secret_issued_before' })
    .update({ value: String(issuedBefore - 2 * 3600 * 1000) });
  await s.core.prune();
  t.equal((await s.db('gatehouse_setting').where({ name: 'jwt_secret' })).length, 0, 'deleted after');
});

t.test('a rotation keeps the old key verifying for the longest --token-ttl any instance signs with (newcomer item 17)', async (t) => {
  const s = await withAdmin(t, { tokenTtl: '24h' });
  const before = Date.now();
  // The shell runs with the default lifetime (1 h); the server signs day-long tokens.
  const r = await cli(s.dataDir, ['--json', 'keys', 'rotate']);
  t.equal(r.code, 0, r.err);
  const old = (await cli(s.dataDir, ['--json', 'keys', 'list'])).json.keys.find((k: { kid: string }) => k.kid === r.json.retired[0]);
  t.ok(Date.parse(old.verify_until) >= before + 24 * 3600 * 1000, `verifies until ${old.verify_until}, a day on`);
  t.equal((await s.call('GET', '/api/me', { token: s.adminToken })).status, 200, 'the day-long token still works');
});
