// Several administrators: promote and demote from the shell, the last one never goes on any
// path, and GET /api/me tells an account who it is.
import t from 'tap';
import { cli } from '../helpers/cli';
import { errorCode, PASSWORD, setSignup, withAdmin } from '../helpers/server';

async function withTwo(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const bob = (await s.signup('bob@example.com')).body[1].Attributes;
  return { ...s, bob, bobToken: await s.signin('bob@example.com') };
}

const patchBody = (type: string, id: string, attributes: Record<string, unknown>) => ({ data: { type, id, attributes }, meta: {} });

t.test('promote: two administrators can both administer; promotion gives the signup action', async (t) => {
  const s = await withTwo(t);
  const signupId = (await s.call('GET', '/api/action?filter=signup', { token: s.adminToken })).body.data[0].id;
  const closeAs = (token: string, permission: number) =>
    s.call('PATCH', `/api/action/${signupId}`, { token, body: patchBody('action', signupId, { permission }) });
  t.ok([403, 404].includes((await closeAs(s.bobToken, 2097025)).status), 'bob may not administer yet');

  const up = await cli(s.dataDir, ['--json', 'user', 'promote', 'bob@example.com']);
  t.equal(up.code, 0, up.err);
  t.same(up.json, { account: { reference_id: s.bob.reference_id, email: 'bob@example.com' }, changed: true });
  t.equal((await cli(s.dataDir, ['--json', 'user', 'promote', 'bob@example.com'])).json.changed, false, 'again: a no-op');
  t.equal((await closeAs(s.bobToken, 2097025)).status, 200, 'bob administers on his very next request');
  t.equal((await closeAs(s.adminToken, 2097057)).status, 200, 'and so does the first administrator');
  const owner = await s.db('action').where({ action_name: 'signup' }).first('user_account_id');
  const bobRow = await s.db('user_account').where({ email_key: 'bob@example.com' }).first('id');
  t.equal(Number(owner.user_account_id), Number(bobRow.id), 'promotion gives the ownership bootstrap gives');
  t.equal((await cli(s.dataDir, ['--json', 'stats'])).json.administrators, 2);

  // Demoting bob hands the signup action back to an administrator: no owner bits remain with him.
  const down = await cli(s.dataDir, ['--json', 'user', 'demote', 'bob@example.com']);
  t.equal(down.code, 0, down.err);
  t.equal(down.json.changed, true);
  t.ok([403, 404].includes((await closeAs(s.bobToken, 2097025)).status), 'bob no longer administers');
  const after = await s.db('action').where({ action_name: 'signup' }).first('user_account_id');
  t.not(Number(after.user_account_id), Number(bobRow.id), 'the signup action left with his administration');
  await setSignup(s, s.adminToken, 2097025);
  const byBob = await s.signup('carol@example.com', PASSWORD, s.bobToken);
  t.equal(byBob.status, 403, 'a former administrator cannot create accounts while signup is closed');
  const events = (await cli(s.dataDir, ['--json', 'audit'])).json.events.map((e: { event: string }) => e.event);
  t.ok(events.includes('administrator_added') && events.includes('administrator_removed'), 'both audited');
});

t.test('the last administrator stays: demote, disable, delete, on every path', async (t) => {
  const s = await withTwo(t);
  const admin = (await s.call('GET', '/api/me', { token: s.adminToken })).body.data.id;
  const demote = await cli(s.dataDir, ['--json', 'user', 'demote', 'admin@example.com']);
  t.equal(demote.code, 3, 'CLI demote of the last administrator: exit 3');
  t.equal(demote.json, undefined);
  t.match(demote.err, /last_administrator/);
  t.equal((await cli(s.dataDir, ['user', 'disable', 'admin@example.com'])).code, 3, 'CLI disable: exit 3');
  const del = await s.call('DELETE', `/api/user_account/${admin}`, { token: s.adminToken });
  t.equal(del.status, 409);
  t.equal(errorCode(del), 'last_administrator');

  // With two, either may go, but not both.
  t.equal((await cli(s.dataDir, ['user', 'promote', 'bob@example.com'])).code, 0);
  const off = await s.call('PATCH', `/api/user_account/${admin}`, { token: s.bobToken, body: patchBody('user_account', admin, { disabled: true }) });
  t.equal(off.status, 200, 'bob disables the first administrator');
  // An outside finding: a disabled administrator counted as one, so the last enabled one could go
  // (delete itself, be demoted) and leave nobody who can sign in and administer.
  t.equal((await cli(s.dataDir, ['user', 'demote', 'bob@example.com'])).code, 3, 'a disabled administrator does not count: bob stays');
  t.equal((await s.call('DELETE', `/api/user_account/${s.bob.reference_id}`, { token: s.bobToken })).status, 409, 'nor may bob delete himself');
  t.equal((await cli(s.dataDir, ['user', 'enable', 'admin@example.com'])).code, 0);
  t.equal((await cli(s.dataDir, ['user', 'demote', 'bob@example.com'])).code, 0, 'with the first administrator enabled again, bob may go');
  t.equal((await cli(s.dataDir, ['user', 'demote', 'admin@example.com'])).code, 3, 'but the last one stays');
});

t.test('GET /api/me: the caller, its groups and whether it administers; guests get 401', async (t) => {
  const s = await withTwo(t);
  const guest = await s.call('GET', '/api/me');
  t.equal(guest.status, 401);
  t.equal(errorCode(guest), 'unauthenticated');
  const me = await s.call('GET', '/api/me', { token: s.bobToken });
  t.equal(me.status, 200);
  t.equal(me.body.data.type, 'user_account');
  t.equal(me.body.data.id, s.bob.reference_id);
  t.equal(me.body.data.attributes.email, 'bob@example.com');
  t.notOk(Object.hasOwn(me.body.data.attributes, 'password'));
  t.equal(me.body.meta.administrator, false);
  const groups = me.body.meta.groups as Array<{ id: string; name: string }>;
  t.ok(
    groups.some((g) => g.id === s.bob.usergroup_id),
    'the dedicated group is listed',
  );
  t.ok(groups.every((g) => typeof g.id === 'string' && typeof g.name === 'string'));
  t.equal((await s.call('GET', '/api/me', { token: s.adminToken })).body.meta.administrator, true);
  t.equal((await s.call('GET', '/api/me', { token: 'not.a.token' })).status, 401, 'a bad token is refused, not a guest');
});
