// Thousands of malformed, oversized, wrongly typed and prototype-polluting requests to every
// endpoint (seeded, so a failure replays): zero 5xx, no crash, no row written by a refused request.
import fc from 'fast-check';
import t from 'tap';
import { countRows, errorCode, PASSWORD, setSignup, withAdmin } from '../helpers/server';

const TABLES = ['user_account', 'usergroup', 'membership', 'action', 'world', 'record_usergroup', 'account_token', 'recovery_code'];
const ACTIONS = [
  'user_account/signup',
  'user_account/signin',
  'user_account/change_password',
  'user_account/change_email',
  'user_account/signout_everywhere',
  'user_account/request_verification',
  'user_account/verify_email',
  'user_account/reset_password_request',
  'user_account/reset_password',
  'user_account/totp_enroll',
  'user_account/totp_confirm',
  'user_account/totp_disable',
  'world/become_an_administrator',
  'nope/nope',
];
const TYPES = ['user_account', 'usergroup', 'action', 'world', 'membership', '__proto__', 'constructor', '..', '%00'];
const POLLUTING = ['__proto__', 'constructor', 'prototype'];

const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constant('x'.repeat(70 * 1024)),
  fc.constant({ __proto__: { polluted: 'yes' } }),
  fc.constant({ constructor: { prototype: { polluted: 'yes' } } }),
  fc.integer(),
  fc.double(),
  fc.constant(null),
);
const attributes = fc.dictionary(
  fc.oneof(
    fc.constantFrom('email', 'name', 'password', 'passwordConfirm', 'currentPassword', 'token', 'otp', 'recovery_code', 'permission', ...POLLUTING),
    fc.string({ maxLength: 12 }),
  ),
  hostileValue,
  { maxKeys: 6 },
);
const body = fc.oneof(
  attributes.map((a) => JSON.stringify({ attributes: a })),
  attributes.map((a) => JSON.stringify({ data: { type: 'usergroup', id: 'x', attributes: a }, meta: {} })),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constant('{"attributes":{"__proto__":{"polluted":"yes"}}}'),
  fc.constant('{"data":{"constructor":{"prototype":{"polluted":"yes"}}}}'),
  fc.constant(''),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/vnd.api+json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  '',
);
const query = fc.oneof(
  fc.constant(''),
  fc
    .dictionary(
      fc.constantFrom('filter', 'sort', 'page[size]', 'page[number]', 'include', '__proto__', 'page', 'filter[x]'),
      fc.string({ unit: 'binary', maxLength: 30 }),
      { maxKeys: 4 },
    )
    .map((d) => '?' + new URLSearchParams(d).toString()),
  fc.string({ maxLength: 60 }).map((s) => '?' + s),
);

/** A sample's headers: its content type and credentials (none, the user's token, garbage or a raw value). */
function headersFor(r: { contentType: string; auth: string }, userToken: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (r.contentType) headers['content-type'] = r.contentType;
  if (r.auth === 'user') headers.authorization = `Bearer ${userToken}`;
  else if (r.auth === 'garbage') headers.authorization = 'Bearer eyJhbGciOiJub25lIn0.e30.';
  else if (r.auth !== 'none') headers.authorization = r.auth;
  return headers;
}

t.test('hostile requests: zero 5xx, no crash, no row from a refused request', async (t) => {
  const s = await withAdmin(t, { rateLimits: false });
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('user@example.com');
  const userToken = await s.signin('user@example.com');
  await setSignup(s, s.adminToken, 2097025);
  const someId = (await s.call('GET', '/api/action', { token: s.adminToken })).body.data[0].id;

  const request = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
    path: fc.oneof(
      fc.constantFrom(...ACTIONS).map((a) => `/action/${a}`),
      fc
        .tuple(
          fc.constantFrom(...TYPES),
          fc.oneof(
            fc.constant(''),
            fc.constant(`/${someId}`),
            fc.uuid().map((u) => `/${u}`),
            fc.string({ maxLength: 20 }).map((x) => `/${encodeURIComponent(x)}`),
          ),
        )
        .map(([ty, id]) => `/api/${ty}${id}`),
      fc.constantFrom('/ping', '/statistics', '/', '/api', '/action', '/%2e%2e/etc/passwd', '/api/action/%00'),
    ),
    query,
    body: fc.option(body, { nil: undefined }),
    contentType,
    auth: fc.constantFrom('none', 'user', 'garbage', 'Bearer null', 'Basic abc', 'Bearer ' + 'x'.repeat(5000)),
  });
  const samples = fc.sample(request, { numRuns: 2500, seed: 20261122 });

  const before = await Promise.all(TABLES.map((tb) => countRows(s, tb)));
  let groupsCreated = 0;
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  for (let i = 0; i < samples.length; i += 10) {
    await Promise.all(
      samples.slice(i, i + 10).map(async (r) => {
        const headers = headersFor(r, userToken);
        const hasBody = r.body !== undefined && !['GET', 'HEAD'].includes(r.method);
        let status: number;
        try {
          const res = await fetch(s.url + r.path + r.query, { method: r.method, headers, body: hasBody ? r.body : undefined });
          status = res.status;
          await res.arrayBuffer();
        } catch (err) {
          failures.push(`${r.method} ${r.path}: ${(err as Error).message}`);
          return;
        }
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500) failures.push(`${status} ${r.method} ${r.path}${r.query.slice(0, 40)} ${String(r.body).slice(0, 80)}`);
        if (status === 201 && r.path === '/api/usergroup') groupsCreated++;
      }),
    );
  }
  t.same(failures, [], 'no 5xx and no dropped connection');
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');

  const after = await Promise.all(TABLES.map((tb) => countRows(s, tb)));
  const expected = [...before];
  expected[TABLES.indexOf('usergroup')] += groupsCreated;
  t.same(after, expected, `rows changed only by accepted requests (${groupsCreated} groups created)`);
  t.equal((await s.call('GET', '/ping')).text, 'pong', 'still alive');
  t.ok(await s.signin('user@example.com', PASSWORD), 'still serving signins');
  t.notMatch(s.logs.join(''), /"event":"internal_error"/);
  void errorCode;
});

t.test('hostile relationship requests: zero 5xx, no escalation, rows change only on 204', async (t) => {
  const s = await withAdmin(t, { rateLimits: false });
  await setSignup(s, s.adminToken, 2097057);
  const user = (await s.signup('user@example.com')).body[1].Attributes;
  const userToken = await s.signin('user@example.com');
  const groups = (await s.call('GET', '/api/usergroup?page[size]=100', { token: s.adminToken })).body.data as Array<{
    id: string;
    attributes: { system_role: string | null };
  }>;
  const admins = groups.find((g) => g.attributes.system_role === 'administrators')!.id;
  const adminId = (await s.call('GET', '/api/me', { token: s.adminToken })).body.data.id;
  const known = [user.reference_id, user.usergroup_id, admins, adminId, (await s.call('GET', '/api/action', { token: s.adminToken })).body.data[0].id];

  const id = fc.oneof(fc.constantFrom(...known), fc.uuid(), fc.string({ maxLength: 20 }), fc.constant(known[0].toUpperCase()));
  const item = fc.oneof(
    fc.record({ type: fc.constantFrom('user_account', 'usergroup', 'x', '__proto__'), id: fc.oneof(id, hostileValue) }),
    hostileValue,
    fc.constant({ __proto__: { type: 'user_account' } }),
  );
  const linkageBody = fc.oneof(
    fc.array(item, { maxLength: 5 }).map((data) => JSON.stringify({ data })),
    fc.array(item, { minLength: 101, maxLength: 102 }).map((data) => JSON.stringify({ data })),
    item.map((data) => JSON.stringify({ data })),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ unit: 'binary', maxLength: 100 }),
  );
  const request = fc.record({
    method: fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH', 'PUT'),
    path: fc
      .tuple(fc.constantFrom(...TYPES), id, fc.constantFrom('members', 'usergroups', 'nope', '__proto__', ''))
      .map(([ty, i, rel]) => `/api/${ty}/${encodeURIComponent(String(i))}/relationships/${rel}`),
    body: fc.option(linkageBody, { nil: undefined }),
    contentType,
    auth: fc.constantFrom('none', 'user', 'garbage'),
  });
  const samples = fc.sample(request, { numRuns: 1500, seed: 20261123 });
  const rows = () => Promise.all(['membership', 'record_usergroup', 'usergroup', 'user_account'].map((tb) => countRows(s, tb)));
  const before = await rows();
  const failures: string[] = [];
  let accepted = 0;
  for (let i = 0; i < samples.length; i += 10) {
    await Promise.all(
      samples.slice(i, i + 10).map(async (r) => {
        const headers = headersFor(r, userToken);
        const res = await fetch(s.url + r.path, { method: r.method, headers, body: r.body !== undefined && r.method !== 'GET' ? r.body : undefined }).catch(
          (err: Error) => (failures.push(`${r.method} ${r.path}: ${err.message}`), undefined),
        );
        if (!res) return;
        await res.arrayBuffer();
        if (res.status >= 500) failures.push(`${res.status} ${r.method} ${r.path} ${String(r.body).slice(0, 80)}`);
        if (res.status === 204) accepted++;
      }),
    );
  }
  t.same(failures, [], 'no 5xx and no dropped connection');
  const after = await rows();
  if (accepted === 0) t.same(after, before, 'nothing accepted, nothing changed');
  t.same(after.slice(2), before.slice(2), 'no group or account appeared or vanished');
  t.equal((await s.call('GET', '/api/me', { token: userToken })).body.meta.administrator, false, 'the user did not make itself an administrator');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched');
  t.equal((await s.call('GET', '/ping')).text, 'pong', 'still alive');
  t.notMatch(s.logs.join(''), /"event":"internal_error"/);
  t.comment(`${accepted} accepted changes`);
});
