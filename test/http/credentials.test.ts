// change_password, change_email, signout_everywhere: each refuses every earlier token at once.
import t from 'tap';
import { errorCode, PASSWORD, setSignup, tokenOf, withAdmin } from '../helpers/server';

async function withUser(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('carol@example.com');
  return { ...s, token: await s.signin('carol@example.com') };
}

const me = (s: Awaited<ReturnType<typeof withUser>>, token: string) => s.call('GET', '/api/user_account', { token });

t.test('change_password: fresh token works, every earlier one is refused', async (t) => {
  const s = await withUser(t);
  const other = await s.signin('carol@example.com'); // a second session
  const wrong = await s.action(
    'user_account',
    'change_password',
    { currentPassword: 'not my password', password: 'brand new password 1', passwordConfirm: 'brand new password 1' },
    s.token,
  );
  t.equal(wrong.status, 401);
  t.equal(errorCode(wrong), 'invalid_credentials');
  const weak = await s.action(
    'user_account',
    'change_password',
    { currentPassword: PASSWORD, password: 'password123', passwordConfirm: 'password123' },
    s.token,
  );
  t.equal(errorCode(weak), 'password_too_common');
  t.equal((await me(s, s.token)).status, 200, 'refused changes changed nothing');

  const r = await s.action(
    'user_account',
    'change_password',
    { currentPassword: PASSWORD, password: 'brand new password 1', passwordConfirm: 'brand new password 1' },
    s.token,
  );
  t.equal(r.status, 200);
  const fresh = tokenOf(r);
  t.equal((await me(s, fresh)).status, 200, 'the fresh token works');
  for (const old of [s.token, other]) {
    const res = await me(s, old);
    t.equal(res.status, 401);
    t.equal(errorCode(res), 'invalid_token');
  }
  t.equal((await s.action('user_account', 'signin', { email: 'carol@example.com', password: PASSWORD })).status, 401, 'old password refused');
  t.ok(await s.signin('carol@example.com', 'brand new password 1'), 'new password signs in');
});

t.test('change_email: needs the password, refuses taken addresses, ends other sessions', async (t) => {
  const s = await withUser(t);
  const taken = await s.action('user_account', 'change_email', { password: PASSWORD, email: 'ADMIN@example.com' }, s.token);
  t.equal(taken.status, 409);
  t.equal(errorCode(taken), 'email_taken');
  const bad = await s.action('user_account', 'change_email', { password: PASSWORD, email: 'not an email' }, s.token);
  t.equal(bad.status, 400);
  const wrongPw = await s.action('user_account', 'change_email', { password: 'wrong password here', email: 'carol2@example.com' }, s.token);
  t.equal(wrongPw.status, 401);

  const r = await s.action('user_account', 'change_email', { password: PASSWORD, email: 'Carol2@Example.com' }, s.token);
  t.equal(r.status, 200);
  t.equal((await me(s, s.token)).status, 401, 'the old token is refused');
  const fresh = tokenOf(r);
  const row = await me(s, fresh);
  t.equal(row.body.data[0].attributes.email, 'Carol2@Example.com');
  t.equal(row.body.data[0].attributes.email_verified, false, 'the new address is unverified');
  t.ok(await s.signin('carol2@example.com'), 'signin with the new address');
  t.equal((await s.action('user_account', 'signin', { email: 'carol@example.com', password: PASSWORD })).status, 401, 'the old address no longer signs in');
});

t.test('signout_everywhere ends every session including the current one', async (t) => {
  const s = await withUser(t);
  const other = await s.signin('carol@example.com');
  const r = await s.action('user_account', 'signout_everywhere', {}, s.token);
  t.equal(r.status, 200);
  t.equal((await me(s, s.token)).status, 401);
  t.equal((await me(s, other)).status, 401);
  t.equal((await me(s, await s.signin('carol@example.com'))).status, 200, 'a new signin works');
});

t.test('self-service actions need a signed-in caller', async (t) => {
  const s = await withUser(t);
  for (const name of ['change_password', 'change_email', 'signout_everywhere', 'request_verification', 'totp_enroll', 'totp_confirm', 'totp_disable']) {
    const r = await s.action('user_account', name, {});
    t.equal(r.status, 401, `${name}: guest refused`);
    t.equal(errorCode(r), 'unauthenticated');
  }
  // An operator can close a self-service action for everyone but administrators.
  const list = await s.call('GET', '/api/action?filter=signout_everywhere', { token: s.adminToken });
  const id = list.body.data[0].id;
  await s.call('PATCH', `/api/action/${id}`, { token: s.adminToken, body: { data: { type: 'action', id, attributes: { permission: 0 } }, meta: {} } });
  const r = await s.action('user_account', 'signout_everywhere', {}, s.token);
  t.equal(r.status, 403, 'permissions decide');
  t.equal(errorCode(r), 'forbidden');
});
