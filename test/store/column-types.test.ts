// Every column of every table, read back on this pass's dialect, decodes to the JavaScript type
// store/schema.ts declares for it (both passes hold SQLite and PostgreSQL to one declaration).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { generate } from 'otplib';
import { decodeRow, SCHEMA, TABLES } from '../../src/store/schema';
import { PASSWORD, setSignup, tempDir, tokenOf, withAdmin } from '../helpers/server';
import { manualClock } from '../helpers/clock';
import { cli } from '../helpers/cli';

const JS_TYPE = { int: 'number', time: 'number', bool: 'boolean', text: 'string' } as const;

t.test('every column decodes to its declared type on this dialect', async (t) => {
  const clock = manualClock(Math.floor(Date.now() / 30000) * 30000 + 1000);
  const s = await withAdmin(t, {}, { clock });
  // Fill every table: accounts, groups, memberships, tokens, counters, recovery codes, audit,
  // a webhook and the deliveries its events and the mails make.
  t.equal(
    (await cli(s.dataDir, ['--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', 'http://127.0.0.1:9/hook', '--description', 'columns'])).code,
    0,
  );
  await setSignup(s, s.adminToken, 2097057);
  // A person an import made (origin).
  const people = path.join(tempDir(t), 'people.csv');
  fs.writeFileSync(people, 'email,name\nimported@example.com,Imported\n');
  t.equal((await cli(s.dataDir, ['import', '--from', 'csv', people])).code, 0);
  // An app password, used once (last_used_at).
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'admin@example.com', '--name', 'NAS']);
  await s.core.directory.bind({ token: null, client: '127.0.0.1', userAgent: null }, 'admin', app.json.secret, []);
  // An API key that expires, used once (expires_at, last_used_at).
  const ssh = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3/+bUL3vO5SYk1wD1s1QLdjVI1nOqGCqsRnCPsbdKx columns@example';
  t.equal((await cli(s.dataDir, ['user', 'ssh-key', 'add', 'admin@example.com', '-'], { stdin: ssh })).code, 0);
  t.equal((await cli(s.dataDir, ['user', 'set-shell', 'admin@example.com', '/usr/bin/zsh'])).code, 0);
  // A sign-in code asked for by mail (mail_code).
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signin_by_mail', '--guest', 'on'])).code, 0);
  t.equal((await s.action('user_account', 'signin_by_mail', { email: 'admin@example.com' })).status, 200);
  await s.core.settle();
  const key = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'admin@example.com', '--name', 'ci', '--expires', '30d']);
  t.equal((await s.call('GET', '/api/me', { token: key.json.key })).status, 200);
  await s.signup('kim@example.com');
  await s.action('user_account', 'signin', { email: 'kim@example.com', password: 'wrong password 99' });
  let kim = await s.signin('kim@example.com');
  await s.action('user_account', 'request_verification', {}, kim);
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, kim);
  const secret = enrol.body[0].Attributes.secret;
  const confirm = await s.action('user_account', 'totp_confirm', { otp: await generate({ secret, epoch: Math.floor(clock.now() / 1000) }) }, kim);
  t.equal(confirm.status, 200);
  kim = tokenOf(confirm);
  await s.call('POST', '/api/usergroup', { token: kim, body: { data: { type: 'usergroup', attributes: { name: 'team' } } } });
  // A relying party and provider state (through the provider's adapter, as oidc-provider writes it).
  t.equal((await cli(s.dataDir, ['client', 'add', '--name', 'App', '--redirect-uri', 'https://app.example.com/cb'])).code, 0);
  const kimRef = (await s.db('user_account').where({ email_key: 'kim@example.com' }).first('reference_id')).reference_id;
  const grants = s.core.oidc.adapter('Grant');
  await grants.upsert('g1', { accountId: kimRef, grantId: 'g1', uid: 'u1' }, 600);
  await grants.consume('g1');
  // A device code a person has typed in (its user code in a column of its own).
  await s.core.oidc.adapter('DeviceCode').upsert('d1', { clientId: 'c1', userCode: 'BCDFGHJK', accountId: kimRef, grantId: 'g1' }, 600);
  // An app behind forward authentication.
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', 'app.example.com', '--two-factor', '--path', '/x'])).code, 0);
  // A passkey ceremony begun (its challenge, in the store) and a passkey as registration stores one.
  t.equal((await s.action('user_account', 'passkey_options', {})).status, 200);
  const kimId = (await s.db('user_account').where({ email_key: 'kim@example.com' }).first('id')).id;
  await s.db('passkey').insert({
    reference_id: 'a7d0b1c2-0000-4000-8000-000000000001',
    account_id: kimId,
    credential_id: 'Y3JlZGVudGlhbA',
    public_key: 'cHVibGljIGtleQ',
    counter: 3,
    transports: '["internal"]',
    name: 'Phone',
    backed_up: true,
    created_at: clock.now(),
    last_used_at: clock.now(),
  });
  // Invitations: one accepted (used_at, account_id), one revoked, one open.
  const made = await cli(s.dataDir, ['--json', 'user', 'invite', 'new@example.com', '--print-link']);
  t.equal(made.code, 0, made.err);
  const token = new URL(made.json.link).searchParams.get('invite');
  t.equal((await s.action('user_account', 'signup', { invite: token, name: 'New', password: PASSWORD, passwordConfirm: PASSWORD })).status, 200);
  const other = await cli(s.dataDir, ['--json', 'user', 'invite', 'gone@example.com']);
  t.equal((await cli(s.dataDir, ['user', 'invite-revoke', other.json.invitation.id])).code, 0);
  t.equal((await cli(s.dataDir, ['user', 'invite', 'open@example.com', '--administrator'])).code, 0);
  // An upstream provider (added from the shell), an identity linked through it, a sign-in in flight.
  const provider = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'up', '--issuer', 'https://id.example.com', '--client-id', 'gh', '--client-secret-env', 'S', '--trust-email'],
    {
      env: { S: 'secret' },
    },
  );
  t.equal(provider.code, 0, provider.err);
  const providerId = (await s.db('upstream_provider').first('id')).id;
  await s.db('linked_identity').insert({
    reference_id: 'b7d0b1c2-0000-4000-8000-000000000002',
    account_id: kimId,
    provider_id: providerId,
    subject: 'sub-1',
    email: 'kim@example.com',
    created_at: clock.now(),
    last_used_at: clock.now(),
  });
  await s.db('upstream_flow').insert({
    state_hash: 'a'.repeat(64),
    provider_id: providerId,
    binding: 'b'.repeat(64),
    nonce: 'n',
    code_verifier: 'v',
    purpose: 'link',
    account_id: kimId,
    carry: '{}',
    expires_at: clock.now() + 600_000,
  });
  // A SCIM token (one revoked) and a person's externalId (as a provisioning service sets it).
  t.equal((await cli(s.dataDir, ['scim', 'token', 'add', '--name', 'entra'])).code, 0);
  t.equal((await cli(s.dataDir, ['scim', 'token', 'add', '--name', 'old'])).code, 0);
  t.equal((await cli(s.dataDir, ['scim', 'token', 'revoke', 'old'])).code, 0);
  await s.db('scim_token').where({ name: 'entra' }).update({ last_used_at: clock.now() });
  await s.db('user_account').where({ id: kimId }).update({ external_id: 'ext-kim' });
  await s.db('usergroup').where({ name: 'team' }).update({ external_id: 'ext-team' });
  // Groups inside groups: an edge and the closure it implies.
  for (const name of ['outer', 'inner']) t.equal((await cli(s.dataDir, ['group', 'create', name])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'outer', 'inner'])).code, 0);
  // A group a configuration file manages.
  const configFile = path.join(s.dataDir, 'gatehouse.yaml');
  fs.writeFileSync(configFile, 'version: 1\ngroups:\n  - name: from-file\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', configFile])).code, 0);
  // A SCIM push target (its first sync queued), and what it holds.
  const target = await cli(
    s.dataDir,
    ['--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2', '--token-stdin'],
    {
      stdin: 'app-token',
    },
  );
  t.equal(target.code, 0, target.err);
  await s.db('scim_pushed').insert({ target_id: (await s.db('scim_target').first('id')).id, reference_id: kimRef, kind: 'User', remote_id: 'r-1' });
  // A directory source and the entry that ties a person to it, every column set (written directly:
  // adding one through the shell needs a directory that answers).
  const [source] = await s
    .db('directory_source')
    .insert({
      name: 'corp',
      url: 'ldaps://ldap.example.com',
      start_tls: true,
      ca_certificate: '-----BEGIN CERTIFICATE-----',
      bind_dn: 'cn=reader,dc=example,dc=com',
      bind_password: 'bind-secret',
      base_dn: 'dc=example,dc=com',
      user_filter: '(objectClass=inetOrgPerson)',
      group_filter: '(objectClass=groupOfNames)',
      uid_attribute: 'uid',
      id_attribute: 'entryUUID',
      every_seconds: 3600,
      keep_passwords: true,
      next_sync_at: clock.now(),
      last_sync_at: clock.now(),
      last_status: 'ok',
      last_result: '{}',
      created_at: clock.now(),
    })
    .returning('id');
  await s.db('source_entry').insert({
    source_id: typeof source === 'object' ? source.id : source,
    kind: 'person',
    entry_id: 'a1cb4f58-7f07-1041-9dc8-b186a7c6d4d7',
    dn: 'uid=kim,ou=people,dc=example,dc=com',
    account_id: kimId,
    usergroup_id: (await s.db('usergroup').where({ name: 'team' }).first('id')).id,
    gone_at: clock.now(),
    first_signin_at: clock.now(),
  });
  // A SAML service provider, its signing key and next key, and a sign-in in progress (answered).
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'add', '--entity-id', 'https://sp.example.com', '--acs-url', 'https://sp.example.com/acs'])).code, 0);
  t.equal((await cli(s.dataDir, ['saml', 'cert', 'rotate'])).code, 0);
  await s.db('saml_request').insert({
    handle: 'h'.repeat(32),
    sp_id: (await s.db('saml_sp').first('id')).id,
    request_id: '_r1',
    acs_url: 'https://sp.example.com/acs',
    relay_state: 'r',
    force_authn: true,
    created_at: clock.now(),
    expires_at: clock.now() + 600_000,
    answered_at: clock.now(),
  });
  // The sign-in a session made at the SP (what its LogoutRequest must name), and a logout request answered.
  await s.db('saml_signin').insert({
    session_id: (await s.db('session').first('id')).id,
    sp_id: (await s.db('saml_sp').first('id')).id,
    name_id: 'kim@example.com',
    session_index: '_i1',
    created_at: clock.now(),
  });
  await s.db('saml_logout_request').insert({ sp_id: (await s.db('saml_sp').first('id')).id, request_id: '_l1', expires_at: clock.now() + 660_000 });
  // A client a session signed in to (its end is told there).
  await s.db('oidc_signin').insert({
    session_id: (await s.db('session').first('id')).id,
    client_id: (await s.db('oidc_client').first('client_id')).client_id,
    created_at: clock.now(),
  });
  // A rotated key (retired_at, verify_until) and the settings of a store upgraded from HS256.
  t.equal((await cli(s.dataDir, ['keys', 'rotate'])).code, 0);
  await s.db('gatehouse_setting').insert([
    { name: 'jwt_secret', value: 'c2VjcmV0' },
    { name: 'jwt_secret_issued_before', value: '0' },
  ]);

  for (const table of TABLES) {
    const declared: Record<string, string> = SCHEMA[table];
    const actual = Object.keys(await s.db(table).columnInfo());
    t.same(actual.sort(), Object.keys(declared).sort(), `${table}: the declaration names every column`);
    const rows: Array<Record<string, unknown>> = await s.db(table).select();
    t.ok(rows.length > 0, `${table} has rows to check`);
    const seen = new Set<string>();
    for (const raw of rows) {
      // What the driver gave must be a lossless form of the declared type.
      for (const [column, type] of Object.entries(declared)) {
        const v = raw[column];
        if (v === null || v === undefined) continue;
        const ok =
          type === 'text'
            ? typeof v === 'string'
            : type === 'bool'
              ? [true, false, 0, 1].includes(v as never)
              : /^-?\d+$/.test(String(v)) && Number.isSafeInteger(Number(v));
        if (!ok) t.fail(`${table}.${column}: the driver gave ${typeof v} ${JSON.stringify(v)} for a ${type} column`);
      }
      const row = decodeRow<Record<string, unknown>>(table, raw);
      for (const [column, type] of Object.entries(declared)) {
        const value = row[column];
        if (value === null) continue;
        seen.add(column);
        if (typeof value !== JS_TYPE[type as keyof typeof JS_TYPE] || (type !== 'text' && type !== 'bool' && !Number.isInteger(value))) {
          t.fail(`${table}.${column}: ${JSON.stringify(value)} is not ${type}`);
        }
      }
    }
    // Nullable columns may be null in every row; the rest were checked with values.
    const unchecked = Object.keys(declared).filter((c) => !seen.has(c));
    t.ok(
      unchecked.every((c) => rows.every((r) => r[c] === null)),
      `${table}: every column with a value was checked (${unchecked.join(', ') || 'all'})`,
    );
  }
});
