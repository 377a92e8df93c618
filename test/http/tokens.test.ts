// Bearer tokens: every kind of bad token is a 401 invalid_token, never a guest downgrade.
import { createHmac, randomBytes } from 'node:crypto';
import t from 'tap';
import jwt from 'jsonwebtoken';
import bcrypt from 'bcrypt';
import type { Knex } from 'knex';
import { errorCode, setSignup, withAdmin } from '../helpers/server';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

async function secretOf(s: { db: Knex }): Promise<Buffer> {
  const row = await s.db('gatehouse_setting').where({ name: 'jwt_secret' }).first();
  return Buffer.from(row.value, 'base64');
}

t.test('the token carries the documented claims', async (t) => {
  const s = await withAdmin(t);
  const claims = jwt.decode(s.adminToken, { complete: true })!;
  t.equal(claims.header.alg, 'HS256');
  const p = claims.payload as Record<string, unknown>;
  t.match(p, { iss: 'gatehouse', email: 'admin@example.com', name: 'admin', auth_version: 1 });
  for (const c of ['sub', 'iat', 'nbf', 'exp', 'jti']) t.ok(p[c] !== undefined, `has ${c}`);
  t.equal((p.exp as number) - (p.iat as number), 86400, 'default lifetime 24 h');
});

t.test('bad tokens are refused with 401 invalid_token and a WWW-Authenticate header', async (t) => {
  const s = await withAdmin(t);
  const secret = await secretOf(s);
  const good = jwt.decode(s.adminToken) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const [h, p, sig] = s.adminToken.split('.');
  const tampered = [h, b64({ ...good, email: 'evil@example.com' }), sig].join('.');
  const cases: Record<string, string> = {
    tampered,
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${p}.`,
    HS512: jwt.sign({ ...good }, secret, { algorithm: 'HS512' }),
    'other secret': jwt.sign({ ...good }, randomBytes(32), { algorithm: 'HS256' }),
    expired: jwt.sign({ ...good, iat: now - 7200, nbf: now - 7200, exp: now - 3600 }, secret, { algorithm: 'HS256' }),
    'no exp': jwt.sign(Object.fromEntries(Object.entries(good).filter(([k]) => k !== 'exp')), secret, { algorithm: 'HS256' }),
    'wrong issuer': jwt.sign({ ...good, iss: 'someone-else' }, secret, { algorithm: 'HS256' }),
    'future auth_version': jwt.sign({ ...good, auth_version: 2 }, secret, { algorithm: 'HS256' }),
    'unknown account': jwt.sign({ ...good, sub: '00000000-0000-4000-8000-000000000000' }, secret, { algorithm: 'HS256' }),
    malformed: 'not.a.jwt',
    garbage: 'x'.repeat(500),
    'signature of another header': `${b64({ alg: 'HS256', typ: 'JWT', kid: 'x' })}.${p}.${createHmac('sha256', randomBytes(32)).update('x').digest('base64url')}`,
  };
  for (const [name, token] of Object.entries(cases)) {
    const r = await s.call('GET', '/api/action?filter=signup', { token });
    t.equal(r.status, 401, `${name}: 401`);
    t.equal(errorCode(r), 'invalid_token', `${name}: invalid_token`);
    t.equal(r.headers.get('www-authenticate'), 'Bearer error="invalid_token"', `${name}: header`);
  }
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
