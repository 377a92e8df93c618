// The main journeys with random canary secrets; then everything the server and the CLI printed
// (and the audit table) is searched for them: zero matches. Security events are audited.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { generate } from 'otplib';
import { cli } from '../helpers/cli';
import { Reply, startTestServer, tokenOf } from '../helpers/server';
import { manualClock } from '../helpers/clock';
import { startSmtp, tokenIn } from '../helpers/smtp';

const canary = (label: string) => `${label}-${randomBytes(9).toString('base64url')}`;

t.test('no password, token, secret or code ever reaches a log line, CLI output or the audit table', async (t) => {
  const secrets: string[] = [];
  const keep = <T extends string>(s: T) => (secrets.push(s), s);
  const jwtsOf = (r: Reply) => {
    if (Array.isArray(r.body)) for (const i of r.body) if (i.ResponseType === 'client.store.set') keep(i.Attributes.value);
    return r;
  };

  const smtp = await startSmtp(t);
  // The server's clock starts a TOTP step, so step-1 and step stay in the accepted window.
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const s = await startTestServer(t, { smtpUrl: smtp.url, signinFailuresPerAccount: '3' }, undefined, { clock });
  const cliOut: string[] = [];
  const run = async (args: string[], stdin?: string, env?: NodeJS.ProcessEnv) => {
    const r = await cli(s.dataDir, args, { stdin, env });
    cliOut.push(r.out, r.err);
    return r;
  };

  const adminPw = keep(canary('admin-pw'));
  t.equal((await run(['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'], adminPw + '\n')).code, 0);
  const adminToken = tokenOf(jwtsOf(await s.action('user_account', 'signin', { email: 'root@example.com', password: adminPw })));
  // Sessions and keys: a refresh, a replayed refresh token, the session list, a key rotation.
  const adminSignin = jwtsOf(await s.action('user_account', 'signin', { email: 'root@example.com', password: adminPw }));
  const adminRefresh = (adminSignin.body as Array<{ Attributes: { key?: string; value?: string } }>).find((i) => i.Attributes.key === 'refresh_token')!
    .Attributes.value!;
  t.equal(jwtsOf(await s.action('user_account', 'refresh', { refresh_token: adminRefresh })).status, 200);
  t.equal((await s.action('user_account', 'refresh', { refresh_token: adminRefresh })).status, 401);
  await s.action('user_account', 'list_sessions', {}, adminToken);
  t.equal((await run(['keys', 'rotate'])).code, 0);
  await run(['--json', 'keys', 'list']);
  await run(['--json', 'user', 'sessions', 'root@example.com']);
  t.equal((await run(['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);

  // Signup, verification by mail, signin.
  const pw1 = keep(canary('user-pw'));
  t.equal((await s.action('user_account', 'signup', { email: 'u@example.com', name: 'U', password: pw1, passwordConfirm: pw1 })).status, 200);
  const verifyToken = keep(tokenIn(await smtp.next('u@example.com')));
  t.equal((await s.action('user_account', 'verify_email', { token: verifyToken })).status, 200);
  await s.action('user_account', 'verify_email', { token: verifyToken }); // reuse, refused
  let token = tokenOf(jwtsOf(await s.action('user_account', 'signin', { email: 'u@example.com', password: pw1 })));

  // Wrong passwords up to a lockout, and malformed bodies carrying a canary password.
  const wrongPw = keep(canary('wrong-pw'));
  for (let i = 0; i < 4; i++) await s.action('user_account', 'signin', { email: 'u@example.com', password: wrongPw });
  await s.call('POST', '/action/user_account/signin', {
    raw: `{"attributes":{"email":"u@example.com","password":"${wrongPw}"`,
    contentType: 'application/json',
  });
  await s.call('POST', '/action/user_account/signin', { raw: `email=u%40example.com&password=${wrongPw}`, contentType: 'application/x-www-form-urlencoded' });
  await s.call('POST', '/action/user_account/signin', { body: { attributes: { email: 'u@example.com', password: [wrongPw] } } });
  await s.call('GET', `/api/action?filter=${wrongPw}`, { token: adminToken });
  await s.call('GET', `/api/action?password=${wrongPw}`, { token: adminToken });
  t.equal((await run(['user', 'unlock', 'u@example.com'])).code, 0);

  // Password change, TOTP with codes and recovery codes, replay.
  const pw2 = keep(canary('user-pw2'));
  token = tokenOf(jwtsOf(await s.action('user_account', 'change_password', { currentPassword: pw1, password: pw2, passwordConfirm: pw2 }, token)));
  const enrol = await s.action('user_account', 'totp_enroll', { password: pw2 }, token);
  const secret = keep(enrol.body[0].Attributes.secret);
  keep(enrol.body[0].Attributes.uri);
  const step = Math.floor(clock.now() / 30000);
  const code0 = keep(await generate({ secret, epoch: (step - 1) * 30 }));
  const confirm = jwtsOf(await s.action('user_account', 'totp_confirm', { otp: code0 }, token));
  const codes: string[] = confirm.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.recovery_codes').Attributes.codes;
  codes.forEach(keep);
  keep(tokenOf(confirm));
  const code1 = keep(await generate({ secret, epoch: step * 30 }));
  jwtsOf(await s.action('user_account', 'signin', { email: 'u@example.com', password: pw2, otp: code1 }));
  await s.action('user_account', 'signin', { email: 'u@example.com', password: pw2, otp: code1 }); // replay
  jwtsOf(await s.action('user_account', 'signin', { email: 'u@example.com', password: pw2, recovery_code: codes[0] }));

  // Password reset by mail; CLI set-password; revoke sessions.
  await s.action('user_account', 'reset_password_request', { email: 'u@example.com' });
  const resetToken = keep(tokenIn(await smtp.next('u@example.com', 2)));
  const pw3 = keep(canary('user-pw3'));
  t.equal((await s.action('user_account', 'reset_password', { token: resetToken, password: pw3, passwordConfirm: pw3 })).status, 200);
  const pw4 = keep(canary('cli-pw'));
  t.equal((await run(['user', 'set-password', 'u@example.com', '--password-env', 'NEWPW'], undefined, { NEWPW: pw4 })).code, 0);
  t.equal((await run(['user', 'revoke-sessions', 'u@example.com'])).code, 0);
  await run(['--json', 'user', 'list']);
  await run(['--json', 'stats']);
  const audit = await run(['--json', 'audit', '--limit', '1000']);
  t.equal(audit.code, 0);

  await s.core.settle();
  const auditRows = JSON.stringify(await s.db('audit_event').select());
  t.ok(secrets.length > 25, `${secrets.length} secrets tracked`);
  // One subtest per surface and per check: a leak in one does not hide another's.
  const surfaces: Array<[string, string]> = [
    ['the server log', s.logs.join('')],
    ['the CLI output', cliOut.join('\n')],
    ['the audit table', auditRows],
  ];
  for (const [name, text] of surfaces) {
    await t.test(`${name}: no secret`, async (t) => {
      t.same(
        secrets.filter((x) => text.includes(x)),
        [],
        'zero matches',
      );
      t.notMatch(text, /authorization|bearer/i, 'no Authorization header');
      t.notMatch(text, /PRIVATE KEY|"d":"/, 'no signing key');
    });
  }

  // Security events are logged and audited with the account's reference_id.
  const events = (audit.json.events as Array<{ event: string; account: string | null }>).map((e) => e.event);
  await t.test('every security event is audited', async (t) => {
    for (const e of [
      'bootstrap',
      'permission_changed',
      'signup',
      'signin_ok',
      'signin_failed',
      'lockout',
      'email_verified',
      'password_changed',
      'totp_enabled',
      'totp_replay',
      'recovery_code_used',
      'password_reset',
      'password_set',
      'sessions_revoked',
      'account_unlocked',
    ]) {
      t.ok(events.includes(e), `audited: ${e}`);
    }
  });
  const user = await s.db('user_account').where({ email_key: 'u@example.com' }).first('reference_id');
  await t.test("audit rows and log lines carry the account's reference_id", async (t) => {
    const signinOk = audit.json.events.find((e: { event: string; account: string }) => e.event === 'signin_ok' && e.account === user.reference_id);
    t.ok(signinOk, 'signin_ok carries the reference_id');
    t.match(s.logs.join(''), new RegExp(`"event":"lockout","account":"${user.reference_id}"`));
  });

  const since = await run(['--json', 'audit', '--since', '1h', '--account', 'u@example.com']);
  t.ok(since.json.events.length > 0 && since.json.events.every((e: { account: string }) => e.account === user.reference_id));
  t.equal((await run(['audit', '--since', 'yesterday-ish'])).code, 2);
  const human = await run(['audit', '--limit', '3']);
  t.match(human.out, /^TIME\s+EVENT\s+ACCOUNT/);
});
