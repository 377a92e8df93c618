// Bearer tokens: every kind of bad token is a 401 invalid_token, never a guest downgrade.
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, randomBytes } from 'node:crypto';
import t from 'tap';
import jwt from 'jsonwebtoken';
import bcrypt from 'bcrypt';
import type { Knex } from 'knex';
import { errorCode, setSignup, withAdmin } from '../helpers/server';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

async function signingKey(s: { db: Knex }): Promise<{ kid: string; privateKey: KeyObject; publicPem: string }> {
  const row = await s.db('signing_key').whereNull('retired_at').first();
  const privateKey = createPrivateKey(row.private_key);
  return { kid: row.kid, privateKey, publicPem: createPublicKey(privateKey).export({ format: 'pem', type: 'spki' }).toString() };
}

t.test('the token carries the documented claims, signed RS256 with a kid', async (t) => {
  const s = await withAdmin(t);
  const claims = jwt.decode(s.adminToken, { complete: true })!;
  t.equal(claims.header.alg, 'RS256');
  t.equal(claims.header.kid, (await signingKey(s)).kid);
  const p = claims.payload as Record<string, unknown>;
  t.match(p, { iss: s.config.publicUrl, email: 'admin@example.com', name: 'admin', auth_version: 1 });
  for (const c of ['sub', 'iat', 'nbf', 'exp', 'jti']) t.ok(p[c] !== undefined, `has ${c}`);
  t.equal((p.exp as number) - (p.iat as number), s.config.tokenTtl, 'the configured lifetime');
  t.equal(await s.db('gatehouse_setting').where({ name: 'jwt_secret' }).first(), undefined, 'a new store has no HS256 secret');
});

t.test('bad tokens are refused with 401 invalid_token and a WWW-Authenticate header', async (t) => {
  const s = await withAdmin(t);
  const key = await signingKey(s);
  const good = jwt.decode(s.adminToken) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const [h, p, sig] = s.adminToken.split('.');
  const tampered = [h, b64({ ...good, email: 'evil@example.com' }), sig].join('.');
  const sign = (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
    jwt.sign(claims, key.privateKey, { algorithm: 'RS256', keyid: key.kid, header: { alg: 'RS256', typ: 'at+jwt', ...header } });
  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const attackerJwk = { ...attacker.publicKey.export({ format: 'jwk' }), kid: key.kid, alg: 'RS256' };
  // HS256 with the public key as the HMAC secret: the classic algorithm confusion.
  const confused = (header: Record<string, unknown>) => {
    const head = b64({ alg: 'HS256', typ: 'JWT', ...header });
    return `${head}.${p}.${createHmac('sha256', key.publicPem).update(`${head}.${p}`).digest('base64url')}`;
  };
  const cases: Record<string, string> = {
    tampered,
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
    'alg none with our kid': `${b64({ alg: 'none', typ: 'JWT', kid: key.kid })}.${p}.`,
    'HS256 signed with the public key, our kid': confused({ kid: key.kid }),
    'HS256 signed with the public key, no kid': confused({}),
    'another RSA key under our kid': jwt.sign({ ...good }, attacker.privateKey, { algorithm: 'RS256', keyid: key.kid }),
    'an unknown kid': jwt.sign({ ...good }, attacker.privateKey, { algorithm: 'RS256', keyid: 'nope' }),
    'a jku pointing elsewhere': jwt.sign({ ...good }, attacker.privateKey, {
      algorithm: 'RS256',
      keyid: key.kid,
      header: { alg: 'RS256', jku: 'https://evil.example/jwks.json' },
    }),
    'its own key in a jwk header': jwt.sign({ ...good }, attacker.privateKey, {
      algorithm: 'RS256',
      keyid: key.kid,
      header: { alg: 'RS256', jwk: attackerJwk } as never,
    }),
    'our key with a jku header': sign({ ...good }, { jku: 'https://evil.example/jwks.json' }),
    'PS256 with our key': jwt.sign({ ...good }, key.privateKey, { algorithm: 'PS256', keyid: key.kid }),
    expired: sign({ ...good, iat: now - 7200, nbf: now - 7200, exp: now - 3600 }),
    'no exp': sign(Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'exp'))),
    'wrong issuer': sign({ ...good, iss: 'someone-else' }),
    // An ID token has our issuer, key and sub: its typ (JWT) and audience (a client) tell it apart.
    'typ JWT, as an ID token': sign({ ...good }, { typ: 'JWT' }),
    'no typ': sign({ ...good }, { typ: undefined }),
    "a client's audience": sign({ ...good, aud: 'some-client-id' }),
    'no audience': sign(Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'aud'))),
    'the old issuer': sign({ ...good, iss: 'gatehouse' }),
    'future auth_version': sign({ ...good, auth_version: 2 }),
    'unknown account': sign({ ...good, sub: '00000000-0000-4000-8000-000000000000' }),
    'HS256 without a legacy secret': jwt.sign({ ...good, iss: 'gatehouse' }, randomBytes(32), { algorithm: 'HS256' }),
    malformed: 'not.a.jwt',
    garbage: 'x'.repeat(500),
  };
  for (const [name, token] of Object.entries(cases)) {
    const r = await s.call('GET', '/api/action?filter=signup', { token });
    t.equal(r.status, 401, `${name}: 401`);
    t.equal(errorCode(r), 'invalid_token', `${name}: invalid_token`);
    t.equal(r.headers.get('www-authenticate'), 'Bearer error="invalid_token"', `${name}: header`);
  }
  t.equal((await s.call('GET', '/api/action?filter=signup', { token: sign({ ...good }) })).status, 200, 'the same claims signed right pass');
});

t.test('placeholder bearer values count as no credentials', async (t) => {
  const s = await withAdmin(t);
  for (const value of ['Bearer null', 'Bearer undefined', 'Bearer ', 'Bearer']) {
    const r = await s.call('GET', '/api/action', { headers: { authorization: value } });
    t.equal(r.status, 401, value);
    t.equal(errorCode(r), 'unauthenticated', `${value}: treated as a guest`);
  }
  // Signin ignores the header entirely, even a bad one.
  const r = await s.call('POST', '/action/user_account/signin', {
    headers: { authorization: 'Bearer garbage' },
    body: { attributes: { email: 'admin@example.com', password: 'correct horse battery staple' } },
  });
  t.equal(r.status, 200);
  // A token is read only from the Authorization header: never from the query string.
  const q = await s.call('GET', `/api/action?access_token=${s.adminToken}`);
  t.equal(q.status, 400, 'unknown query parameter');
});

t.test('a token issued before a credential change is refused (auth_version)', async (t) => {
  const s = await withAdmin(t);
  const ok = await s.call('GET', '/api/action', { token: s.adminToken });
  t.equal(ok.status, 200);
  // Change the password through the store, as the change_password action will.
  const db = s.db;
  const hash = await bcrypt.hash('a brand new password 42', 4);
  await db('user_account')
    .where({ email_key: 'admin@example.com' })
    .update({ password: hash, auth_version: db.raw('auth_version + 1') });
  const stale = await s.call('GET', '/api/action', { token: s.adminToken });
  t.equal(stale.status, 401);
  t.equal(errorCode(stale), 'invalid_token');
  const fresh = await s.signin('admin@example.com', 'a brand new password 42');
  t.equal((await s.call('GET', '/api/action', { token: fresh })).status, 200, 'a token issued after the change works');
  const old = await s.action('user_account', 'signin', { email: 'admin@example.com', password: 'correct horse battery staple' });
  t.equal(old.status, 401, 'the old password no longer signs in');
});

t.test('a disabled account’s token is refused and it cannot sign in', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const r = await s.signup('bob@example.com');
  const bobId = r.body[1].Attributes.reference_id;
  const bob = await s.signin('bob@example.com');
  const disable = await s.call('PATCH', `/api/user_account/${bobId}`, {
    token: s.adminToken,
    body: { data: { type: 'user_account', id: bobId, attributes: { disabled: true } }, meta: {} },
  });
  t.equal(disable.status, 200);
  t.equal(disable.body.data.attributes.disabled, true);
  const after = await s.call('GET', `/api/user_account/${bobId}`, { token: bob });
  t.equal(after.status, 401);
  t.equal(errorCode(after), 'invalid_token');
  const signin = await s.action('user_account', 'signin', { email: 'bob@example.com', password: 'correct horse battery staple' });
  t.equal(signin.status, 403);
});
