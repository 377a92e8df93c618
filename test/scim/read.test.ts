// SCIM 2.0 reads at /scim/v2, as provisioning services send them, every answer read a second time
// by scimmy (an independent SCIM implementation) against the RFC 7643 schemas: Okta's test
// connection, lookups by userName, externalId and work email, value paths, paging with the cap,
// attributes/excludedAttributes, groups without members (Entra), discovery; a SCIM token opens
// /scim/v2 and nothing else, and a person's API key or access token does not open it.
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, withAdmin } from '../helpers/server';

type Json = Record<string, any>;

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  for (const email of ['ada@example.com', 'bob@example.com', 'cy@contoso.com']) await s.signup(email);
  await cli(s.dataDir, ['group', 'create', 'staff']);
  await cli(s.dataDir, ['group', 'add', 'staff', 'ada@example.com']);
  await cli(s.dataDir, ['group', 'add', 'staff', 'bob@example.com']);
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'okta']);
  t.equal(made.code, 0, made.err);
  const token: string = made.json.token;
  const scim = async (path: string, o: { token?: string | null } = {}) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, { headers: o.token === null ? {} : { authorization: `Bearer ${o.token ?? token}` } });
    return { status: res.status, type: res.headers.get('content-type'), etag: res.headers.get('etag'), body: (await res.json()) as Json };
  };
  return { s, token, scim };
}

/** scimmy's reading of a User or Group the server returned (throws on a schema violation). */
async function scimmyReads(resource: Json): Promise<void> {
  const { default: SCIMMY } = await import('scimmy');
  if (resource.schemas.includes('urn:ietf:params:scim:schemas:core:2.0:Group')) new SCIMMY.Schemas.Group(resource, 'out');
  else new SCIMMY.Schemas.User(resource, 'out');
}

t.test("Okta's test connection, lookups and paging; scimmy reads every resource", async (t) => {
  const { s, scim } = await setUp(t);
  const { default: SCIMMY } = await import('scimmy');

  const first = await scim('/Users?startIndex=1&count=2');
  t.equal(first.status, 200);
  t.match(first.type, /^application\/scim\+json/);
  t.match(first.body, { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 4, startIndex: 1, itemsPerPage: 2 });
  new SCIMMY.Messages.ListResponse(first.body as never);
  for (const r of first.body.Resources) await scimmyReads(r);

  const ada = await scim(`/Users?filter=${encodeURIComponent('userName eq "ADA"')}`);
  t.equal(ada.body.totalResults, 1, 'userName eq is case-insensitive');
  const user = ada.body.Resources[0];
  t.match(user, { userName: 'ada', displayName: 'ada', active: true, emails: [{ value: 'ada@example.com', type: 'work' }] });
  t.same(
    user.groups.map((g: Json) => g.display),
    ['staff'],
    'groups: the managed ones that are SCIM Groups (not the built-in users)',
  );
  t.match(user.meta, { resourceType: 'User', location: `${s.config.publicUrl}/scim/v2/Users/${user.id}`, version: /^W\/"/ });

  const one = await scim(`/Users/${user.id}`);
  t.equal(one.etag, user.meta.version, 'the ETag header is the version');
  await scimmyReads(one.body);

  const byEmail = await scim(`/Users?filter=${encodeURIComponent('emails[type eq "work"].value eq "cy@contoso.com"')}`);
  t.equal(byEmail.body.Resources[0].userName, 'cy', "Entra's lookup by work email");
  t.equal((await scim(`/Users?filter=${encodeURIComponent('emails[type eq "home"].value eq "cy@contoso.com"')}`)).body.totalResults, 0, 'no home email');
  t.equal((await scim(`/Users?filter=${encodeURIComponent('externalId eq "nobody"')}`)).body.totalResults, 0);
  t.equal((await scim(`/Users?filter=${encodeURIComponent('userName sw "a" and active eq "True"')}`)).body.totalResults, 2, 'sw, and, "True"');
  t.equal((await scim(`/Users?filter=${encodeURIComponent('not (userName eq "ada") and emails.value co "example"')}`)).body.totalResults, 2);
  t.equal((await scim(`/Users?filter=${encodeURIComponent('meta.lastModified gt "2000-01-01T00:00:00Z"')}`)).body.totalResults, 4);

  const capped = await scim('/Users?count=5000');
  t.equal(capped.status, 200, 'a large count is capped, not refused');
  const second = await scim('/Users?startIndex=3&count=2');
  t.equal(second.body.startIndex, 3);
  t.not(second.body.Resources[0].id, first.body.Resources[0].id, 'pages do not repeat');

  const only = await scim(`/Users/${user.id}?attributes=userName,emails.value`);
  t.same(Object.keys(only.body).sort(), ['emails', 'id', 'schemas', 'userName'], 'attributes: only those (and id, schemas)');
  t.same(only.body.emails, [{ value: 'ada@example.com' }]);
  const without = await scim(`/Users/${user.id}?excludedAttributes=groups,meta`);
  t.notOk('groups' in without.body);

  const groups = await scim(`/Groups?filter=${encodeURIComponent('displayName eq "staff"')}`);
  t.equal(groups.body.totalResults, 1);
  const staff = groups.body.Resources[0];
  const ids = async (...emails: string[]) => Promise.all(emails.map(async (e) => (await cli(s.dataDir, ['--json', 'user', 'show', e])).json.reference_id));
  t.same(staff.members.map((m: Json) => m.value).sort(), (await ids('ada@example.com', 'bob@example.com')).sort(), 'members: people by id');
  await scimmyReads(staff);
  const bare = await scim(`/Groups/${staff.id}?excludedAttributes=members`);
  t.notOk('members' in bare.body, "Entra's excludedAttributes=members");
  t.equal(bare.body.displayName, 'staff');

  const config = await scim('/ServiceProviderConfig');
  t.match(config.body, {
    patch: { supported: true },
    bulk: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    filter: { supported: true, maxResults: 200 },
  });
  t.equal((await scim('/ResourceTypes')).body.totalResults, 2);
  t.equal((await scim('/Schemas/urn:ietf:params:scim:schemas:core:2.0:User')).body.name, 'User');
});

t.test('bad filters, unknown ids and paths are SCIM errors', async (t) => {
  const { scim } = await setUp(t);
  const bad = await scim(`/Users?filter=${encodeURIComponent('userName eq')}`);
  t.equal(bad.status, 400);
  t.match(bad.body, { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '400', scimType: 'invalidFilter' });
  const unknown = await scim(`/Users?filter=${encodeURIComponent('title eq "boss"')}`);
  t.match(unknown.body, { status: '400', scimType: 'invalidPath' });
  const missing = await scim('/Users/00000000-0000-4000-8000-000000000000');
  t.match(missing, { status: 404, body: { status: '404' } });
  t.match(await scim('/Nothing'), { status: 404, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] } });
  t.match((await scim('/Users?count=abc')).body, { status: '400', scimType: 'invalidValue' });
});

t.test('only a live SCIM token opens /scim/v2', async (t) => {
  const { s, token, scim } = await setUp(t);
  t.match(await scim('/Users', { token: null }), { status: 401, body: { status: '401' } }, 'no token');
  t.match(await scim('/Users', { token: s.adminToken }), { status: 401 }, "an administrator's access token does not open it");
  const key = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'admin@example.com', '--name', 'script']);
  t.equal(key.code, 0, key.err);
  t.match(await scim('/Users', { token: key.json.key }), { status: 401 }, 'nor a person’s API key');
  const api = await fetch(`${s.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(api.status, 401, 'a SCIM token opens nothing but /scim/v2');
  t.equal((await scim('/Users')).status, 200, 'the SCIM token does');
  const listed = (await cli(s.dataDir, ['--json', 'scim', 'token', 'list'])).json.tokens;
  t.match(listed, [{ name: 'okta', revoked_at: null }]);
  t.type(listed[0].last_used_at, 'string', 'its last use is listed');
  t.equal((await cli(s.dataDir, ['scim', 'token', 'revoke', 'okta'])).code, 0);
  t.match(await scim('/Users'), { status: 401 }, 'a revoked token is refused');
});
