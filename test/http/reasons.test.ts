// Issue 73: which rule refused, on real requests and commands. Each refusal below answers its
// reason beside its code: in the action body, the JSON:API body, and the shell's --json error
// (test/unit/reasons.test.ts holds every reason of the catalogue to the same shapes and to the
// table in docs/http-api.md). On SQLite and PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { dbForDir, PASSWORD, type Reply, startTestServer, tempDir, TEST_STORE } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';

const ELEVEN_MINUTES = 11 * 60 * 1000;

/** The code and reason an HTTP answer carries, whichever body style it has. */
function refusal(r: Reply): { status: number; code?: string; reason?: string } {
  const item = Array.isArray(r.body) ? r.body[0]?.Attributes : r.body?.errors?.[0];
  return { status: r.status, code: item?.code, reason: item?.reason };
}
/** The code and reason of a command's --json error line. */
function said(r: { code: number; err: string }): { exit: number; code?: string; reason?: string } {
  const line = r.err.trim().split('\n').pop() ?? '';
  const error = (JSON.parse(line) as { error: { code: string; reason?: string } }).error;
  return { exit: r.code, code: error.code, reason: error.reason };
}

t.test('refusals say their reason over HTTP and at the shell', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  t.equal((await s.signup('admin@example.com')).status, 200);
  const admin = await s.signin('admin@example.com');
  await s.core.accounts.create(s.core.shell, { email: 'ada@example.com', password: PASSWORD });
  const ada = await s.signin('ada@example.com');
  const idOf = async (table: string, where: Record<string, unknown>) => String((await s.db(table).where(where).first()).reference_id);
  const adaId = await idOf('user_account', { email: 'ada@example.com' });
  const adminId = await idOf('user_account', { email: 'admin@example.com' });
  const usersId = await idOf('usergroup', { system_role: 'users' });
  const signupId = await idOf('action', { action_name: 'signup' });

  const file = path.join(tempDir(t), 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\ngroups:\n  - name: platform\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', file])).code, 0, 'a file manages the group platform');
  const platformId = await idOf('usergroup', { name: 'platform' });
  const patch = (type: string, id: string, attributes: Record<string, unknown>, token: string) =>
    s.call('PATCH', `/api/${type}/${id}`, { token, body: { data: { type, id, attributes }, meta: {} } });

  const http: Array<[string, () => Promise<Reply>, { status: number; code: string; reason: string }]> = [
    [
      'a person sets their own permission',
      () => patch('user_account', adaId, { permission: 1 }, ada),
      { status: 403, code: 'forbidden', reason: 'field_not_writable' },
    ],
    [
      'a built-in action deleted',
      () => s.call('DELETE', `/api/action/${signupId}`, { token: admin }),
      { status: 403, code: 'forbidden', reason: 'built_in_records' },
    ],
    [
      'the users group deleted',
      () => s.call('DELETE', `/api/usergroup/${usersId}`, { token: admin }),
      { status: 403, code: 'forbidden', reason: 'system_group' },
    ],
    [
      'a file’s group deleted',
      () => s.call('DELETE', `/api/usergroup/${platformId}`, { token: admin }),
      { status: 403, code: 'forbidden', reason: 'managed_by_file' },
    ],
    ['the statistics, read by a person', () => s.call('GET', '/statistics', { token: ada }), { status: 403, code: 'forbidden', reason: 'administrators_only' }],
    [
      'a second administrator asks to become one',
      () => s.action('world', 'become_an_administrator', {}, ada),
      { status: 403, code: 'forbidden', reason: 'administrator_exists' },
    ],
    [
      'the last administrator disabled',
      () => patch('user_account', adminId, { disabled: true }, admin),
      { status: 409, code: 'last_administrator', reason: 'last_administrator' },
    ],
  ];
  for (const [what, request, expected] of http) t.same(refusal(await request()), expected, what);

  // A permission refusal of the 21-bit model: a member may read the group, not rename it.
  t.equal((await cli(s.dataDir, ['group', 'create', 'staff'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add', 'staff', 'ada@example.com'])).code, 0);
  const staffId = await idOf('usergroup', { name: 'staff' });
  t.same(
    refusal(await patch('usergroup', staffId, { name: 'adas' }, ada)),
    { status: 403, code: 'forbidden', reason: 'not_permitted' },
    'a member renames a group',
  );

  // An API key has no session to add a way in with; an old session must sign in again.
  const key = await s.core.accounts.apiKeys.addMine({ token: ada, client: '127.0.0.1', userAgent: null }, { name: 'script', expiresInSeconds: null });
  t.same(
    refusal(await s.action('user_account', 'passkey_options', { purpose: 'register' }, key.secret)),
    { status: 403, code: 'forbidden', reason: 'api_key_not_a_session' },
    'an API key adds no way in',
  );
  clock.advance(ELEVEN_MINUTES);
  t.same(
    refusal(await s.action('user_account', 'passkey_options', { purpose: 'register' }, ada)),
    { status: 403, code: 'reauthentication_required', reason: 'reauthentication_required' },
    'eleven minutes after signing in, a new way in asks for the password again',
  );

  const shell: Array<[string, string[], { exit: number; code: string; reason: string }]> = [
    ['a file’s group deleted', ['group', 'delete', 'platform'], { exit: 3, code: 'forbidden', reason: 'managed_by_file' }],
    ['the last administrator disabled', ['user', 'disable', 'admin@example.com'], { exit: 3, code: 'last_administrator', reason: 'last_administrator' }],
    [
      'a second administrator bootstrapped',
      ['bootstrap-admin', '--email', 'other@example.com', '--password-env', 'P'],
      { exit: 3, code: 'forbidden', reason: 'administrator_exists' },
    ],
  ];
  for (const [what, args, expected] of shell) t.same(said(await cli(s.dataDir, ['--json', ...args], { env: { P: PASSWORD } })), expected, what);

  // A copy into a store that holds accounts.
  const other = await startTestServer(t, {}, undefined);
  await other.core.accounts.create(other.core.shell, { email: 'someone@example.com', password: PASSWORD });
  const copy = await cli(s.dataDir, ['--json', 'migrate-store', '--to', TEST_STORE === 'postgres' ? dbForDir(other.dataDir)! : `sqlite:${other.dataDir}`]);
  t.same(said(copy), { exit: 3, code: 'forbidden', reason: 'store_not_empty' }, 'migrate-store into a store with accounts');
});

t.test('a directory source’s people and groups: managed_by_directory over HTTP and at the shell', async (t) => {
  const slapd = await startSlapd(t);
  await slapd.add(personLdif('alice', { cn: 'Alice', password: 'alice-pw' }));
  const s = await startTestServer(t);
  t.equal((await s.signup('admin@example.com')).status, 200);
  const admin = await s.signin('admin@example.com');
  const added = await cli(
    s.dataDir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);
  t.equal((await cli(s.dataDir, ['source', 'sync', 'corp'])).code, 0);
  const alice = String((await s.db('user_account').where({ email_key: 'alice@example.org' }).first()).reference_id);
  const renamed = await s.call('PATCH', `/api/user_account/${alice}`, {
    token: admin,
    body: { data: { type: 'user_account', id: alice, attributes: { name: 'Someone Else' } }, meta: {} },
  });
  t.same(refusal(renamed), { status: 403, code: 'forbidden', reason: 'managed_by_directory' }, 'a synced person renamed over HTTP');
  t.same(
    said(await cli(s.dataDir, ['--json', 'user', 'set-username', 'alice@example.org', 'someone'])),
    { exit: 3, code: 'forbidden', reason: 'managed_by_directory' },
    'a synced person’s username changed at the shell',
  );
});

t.test('SCIM: a refusal says its reason in an extension of SCIM’s Error; other errors keep the Error as RFC 7644 has it', async (t) => {
  const s = await startTestServer(t);
  t.equal((await s.signup('admin@example.com')).status, 200);
  const adminId = String((await s.db('user_account').where({ email: 'admin@example.com' }).first()).reference_id);
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\ngroups:\n  - name: platform\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', file])).code, 0, 'a file manages the group platform');
  const platformId = String((await s.db('usergroup').where({ name: 'platform' }).first()).reference_id);
  const token: string = (await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp'])).json.token;
  const scim = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
  };
  const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
  const EXTENSION = 'urn:gatehouse:params:scim:api:messages:2.0:Error';
  const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

  const refusals: Array<[string, () => ReturnType<typeof scim>, string, string]> = [
    [
      'an administrator deactivated',
      () => scim('PATCH', `/Users/${adminId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }),
      '403',
      'scim_may_not_touch_administrators',
    ],
    ['an administrator deleted', () => scim('DELETE', `/Users/${adminId}`), '403', 'scim_may_not_touch_administrators'],
    ['a file’s group deleted', () => scim('DELETE', `/Groups/${platformId}`), '403', 'managed_by_file'],
  ];
  for (const [what, request, status, reason] of refusals) {
    const r = await request();
    t.equal(r.status, Number(status), `${what}: ${JSON.stringify(r.body)}`);
    t.match(r.type, /^application\/scim\+json/);
    t.same(Object.keys(r.body).sort(), ['detail', 'schemas', 'status', EXTENSION].sort(), `${what}: SCIM’s members and the extension’s, nothing beside`);
    t.same(r.body.schemas, [ERROR, EXTENSION], `${what}: the Error and its extension, named in schemas`);
    t.equal(r.body.status, status);
    t.same(r.body[EXTENSION], { reason }, `${what}: ${reason}`);
    t.type(r.body.detail, 'string');
  }
  // docs/scim.md's example is such a reply, as it comes (its detail elided).
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'scim.md'), 'utf8');
  const example = /## Requests[\s\S]*?```json\n([\s\S]*?)```/.exec(doc);
  t.ok(example, 'docs/scim.md shows a refusal');
  const deleted = await scim('DELETE', `/Users/${adminId}`);
  t.same({ ...deleted.body, detail: '…' }, JSON.parse(example![1].replace(/^ {2}/gm, '')), 'the docs show the reply as it comes');
  t.ok(await s.db('user_account').where({ reference_id: adminId, disabled: false }).first(), 'the administrator as they were');
  t.ok(await s.db('usergroup').where({ reference_id: platformId }).first(), 'platform is still there');

  // An error no rule of Gatehouse's refused (a bad filter, a name in use) is SCIM's Error alone.
  const badFilter = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq')}`);
  t.equal(badFilter.status, 400);
  t.same(badFilter.body.schemas, [ERROR]);
  t.same(Object.keys(badFilter.body).sort(), ['detail', 'schemas', 'scimType', 'status'], 'schemas, status, scimType, detail');
  t.equal(badFilter.body.scimType, 'invalidFilter');
});
