// One use case per rule, the same from every front end: the disagreements the copies had.
import t from 'tap';
import { generate } from 'otplib';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { PASSWORD, setSignup, startTestServer, tempDir, withAdmin } from '../helpers/server';

const auditOf = async (dir: string) =>
  (await cli(dir, ['--json', 'audit', '--limit', '1000'])).json.events as Array<{ event: string; account: string | null; details: Record<string, unknown> }>;

t.test('`gatehouse user create` audits the account creation (and the bootstrap it made) like signup does', async (t) => {
  const s = await startTestServer(t, {}, tempDir(t));
  const made = await cli(s.dataDir, ['--json', 'user', 'create', '--email', 'first@example.com', '--password-stdin'], { stdin: PASSWORD });
  t.equal(made.code, 0, made.err);
  const ref = made.json.account.reference_id;
  t.equal(made.json.account.administrator, true, 'the first account became the administrator');
  const events = await auditOf(s.dataDir);
  t.ok(
    events.find((e) => e.event === 'signup' && e.account === ref && e.details.via === 'cli'),
    'signup audited, via cli',
  );
  t.ok(
    events.find((e) => e.event === 'bootstrap' && e.account === ref && e.details.via === 'cli'),
    'bootstrap audited, via cli',
  );
  const http = await s.signup('second@example.com', PASSWORD, await s.signin('first@example.com'));
  t.equal(http.status, 200);
  const again = await auditOf(s.dataDir);
  t.ok(
    again.find((e) => e.event === 'signup' && e.account === http.body[1].Attributes.reference_id && e.details.via === 'http'),
    'the same row over HTTP, via http',
  );
});

t.test('disabling over the record API is audited, and so is a permission change in the same PATCH', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  const bob = (await s.signup('bob@example.com')).body[1].Attributes.reference_id;
  const patch = (attributes: Record<string, unknown>) =>
    s.call('PATCH', `/api/user_account/${bob}`, { token: s.adminToken, body: { data: { type: 'user_account', id: bob, attributes }, meta: {} } });
  const r = await patch({ disabled: true, permission: 384 });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.data.attributes.disabled, true);
  t.equal(r.body.data.attributes.permission, 384, 'both changes applied');
  let events = await auditOf(s.dataDir);
  t.ok(
    events.find((e) => e.event === 'account_disabled' && e.account === bob && e.details.via === 'http'),
    'account_disabled audited',
  );
  t.ok(
    events.find((e) => e.event === 'permission_changed' && e.details.record === bob && e.details.permission === 384),
    'permission_changed audited',
  );
  t.equal((await patch({ disabled: false })).status, 200);
  events = await auditOf(s.dataDir);
  t.ok(
    events.find((e) => e.event === 'account_enabled' && e.account === bob),
    'account_enabled audited',
  );
  t.equal((await patch({ disabled: false })).status, 200, 'no change: nothing to audit');
  t.equal((await auditOf(s.dataDir)).filter((e) => e.event === 'account_enabled').length, 1);
});

t.test('promotion by bootstrap-admin gives the same ownership as the first signup', async (t) => {
  const bySignup = await withAdmin(t);
  const signupOwner = await bySignup.db('action').where({ action_name: 'signup' }).first('user_account_id');
  const admin = await bySignup.db('user_account').where({ email_key: 'admin@example.com' }).first('id');
  t.equal(Number(signupOwner.user_account_id), Number(admin.id), 'the first administrator by signup owns the signup action');

  // An account that exists before any administrator (made while none exists, then demoted by
  // hand) is promoted by bootstrap-admin: it must own the signup action too.
  const s = await startTestServer(t);
  await s.signup('owner@example.com');
  await s
    .db('membership')
    .whereIn('usergroup_id', s.db('usergroup').where({ system_role: 'administrators' }).select('id'))
    .del();
  await s.db('action').where({ action_name: 'signup' }).update({ user_account_id: null });
  const r = await cli(s.dataDir, ['--json', 'bootstrap-admin', '--email', 'owner@example.com', '--password-stdin'], { stdin: PASSWORD });
  t.equal(r.code, 0, r.err);
  t.equal(r.json.outcome, 'promoted');
  const owner = await s.db('action').where({ action_name: 'signup' }).first('user_account_id');
  const account = await s.db('user_account').where({ email_key: 'owner@example.com' }).first('id');
  t.equal(Number(owner.user_account_id), Number(account.id), 'the promoted administrator owns the signup action');
});

t.test('turning TOTP off clears its failure count on every path (action and shell alike)', async (t) => {
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const s = await withAdmin(t, {}, { clock });
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, s.adminToken);
  const secret = enrol.body[0].Attributes.secret;
  const step = Math.floor(clock.now() / 30000);
  const confirm = await s.action('user_account', 'totp_confirm', { otp: await generate({ secret, epoch: (step - 1) * 30 }) }, s.adminToken);
  t.equal(confirm.status, 200);
  const token = confirm.body[0].Attributes.value;
  for (let i = 0; i < 3; i++) await s.action('user_account', 'signin', { email: 'admin@example.com', password: PASSWORD, otp: '000000' });
  const ref = (await s.db('user_account').where({ email_key: 'admin@example.com' }).first('reference_id')).reference_id;
  t.ok(
    await s
      .db('rate_counter')
      .where({ counter_key: `totp_account:${ref}` })
      .first(),
    'failures were counted',
  );
  const off = await s.action('user_account', 'totp_disable', { password: PASSWORD, otp: await generate({ secret, epoch: step * 30 }) }, token);
  t.equal(off.status, 200, off.text);
  t.notOk(
    await s
      .db('rate_counter')
      .where({ counter_key: `totp_account:${ref}` })
      .first(),
    'the failure count went with TOTP',
  );
  const events = await auditOf(s.dataDir);
  t.ok(events.find((e) => e.event === 'totp_disabled' && e.account === ref && e.details.via === 'http'));
});
