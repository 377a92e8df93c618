// SCIM 2.0 writes at /scim/v2 in the sequences Okta and Entra ID send (as their documentation
// gives them), each answer read again by scimmy; after each, the account is checked where people
// see it: sign-in, /api/me, the LDAP directory (OpenLDAP's ldapsearch) and the OIDC groups claim
// (openid-client in Chromium). Then bad input: every refusal a SCIM Error, nothing half-written.
import t from 'tap';
import * as oidc from 'openid-client';
import { cli } from '../helpers/cli';
import { launch } from '../helpers/browser';
import { countRows, PASSWORD, type TestServer, withAdmin } from '../helpers/server';
import { startReceiver } from '../helpers/receiver';
import { BASE, ldapServer, ldapTool, ldif, person } from '../helpers/ldap';
import { addClient, APP, authorizationRequest, relyingParty } from '../helpers/oidc';

type Json = Record<string, any>;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function scimClient(s: TestServer) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  const scim = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as Json };
  };
  return { token, scim };
}

async function scimmyReads(resource: Json): Promise<void> {
  const { default: SCIMMY } = await import('scimmy');
  if (resource.schemas.includes(GROUP)) new SCIMMY.Schemas.Group(resource, 'out');
  else new SCIMMY.Schemas.User(resource, 'out');
}

const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;

const signinStatus = async (s: TestServer, email: string) => (await s.action('user_account', 'signin', { email, password: PASSWORD })).status;

t.test('Okta: test connection, lookup, create, PUT, group push, deactivate with PATCH; checked by sign-in and /api/me', async (t) => {
  const { s, url } = await ldapServer(t);
  const { scim } = await scimClient(s);

  t.equal((await scim('GET', '/Users?startIndex=1&count=2')).status, 200, 'test connection');
  const lookup = await scim('GET', `/Users?${q('userName eq "dana.lee@okta.example"')}&startIndex=1&count=100`);
  t.equal(lookup.body.totalResults, 0, 'nobody yet');
  const created = await scim('POST', '/Users', {
    schemas: [USER],
    userName: 'Dana.Lee@okta.example',
    name: { givenName: 'Dana', familyName: 'Lee' },
    emails: [{ primary: true, value: 'dana.lee@okta.example', type: 'work' }],
    displayName: 'Dana Lee',
    locale: 'en-US',
    externalId: '00u1abcd',
    groups: [],
    password: 'ignored-by-gatehouse',
    active: true,
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.equal(created.headers.get('location'), created.body.meta.location, 'Location: the new resource');
  t.match(created.body, { userName: 'dana.lee@okta.example', displayName: 'Dana Lee', externalId: '00u1abcd', active: true });
  await scimmyReads(created.body);
  const id: string = created.body.id;
  const shown = (await cli(s.dataDir, ['--json', 'user', 'show', 'dana.lee@okta.example'])).json;
  t.match(shown, { reference_id: id, username: 'dana.lee@okta.example', email_verified: true, administrator: false }, 'the email is vouched for');
  t.equal(await signinStatus(s, 'dana.lee@okta.example'), 401, 'no password: the ignored one does not open anything');
  const again = await scim('POST', '/Users', { schemas: [USER], userName: 'DANA.LEE@okta.example', emails: [{ value: 'other@okta.example' }] });
  t.match(again, { status: 409, body: { scimType: 'uniqueness' } }, 'a duplicate userName: 409 uniqueness');

  const put = await scim('PUT', `/Users/${id}`, {
    schemas: [USER],
    id,
    userName: 'dana.lee@okta.example',
    name: { givenName: 'Dana', familyName: 'Lee-Smith' },
    emails: [{ primary: true, value: 'dana.lee@okta.example', type: 'work' }],
    displayName: 'Dana Lee-Smith',
    externalId: '00u1abcd',
    active: true,
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  t.equal(put.body.displayName, 'Dana Lee-Smith');
  t.not(put.body.meta.version, created.body.meta.version, 'a write changes the version');

  // Group push: create with a member, then add and remove by value filter, rename with the id repeated.
  const other = (await scim('POST', '/Users', { schemas: [USER], userName: 'sam', emails: [{ value: 'sam@okta.example' }] })).body;
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering', members: [{ value: id, display: 'dana' }] });
  t.equal(group.status, 201, JSON.stringify(group.body));
  await scimmyReads(group.body);
  const gid: string = group.body.id;
  const add = await scim('PATCH', `/Groups/${gid}`, {
    schemas: [PATCH],
    Operations: [{ op: 'add', path: 'members', value: [{ value: other.id, display: 'sam' }] }],
  });
  t.same(add.body.members.map((m: Json) => m.value).sort(), [id, other.id].sort());
  const removed = await scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${other.id}"]` }] });
  t.same(
    removed.body.members.map((m: Json) => m.value),
    [id],
    'remove by value filter',
  );
  const renamed = await scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { id: gid, displayName: 'Platform' } }] });
  t.equal(renamed.body.displayName, 'Platform', 'rename (Okta repeats the id)');
  const groups = (await cli(s.dataDir, ['--json', 'group', 'show', 'Platform'])).json;
  t.match(groups, { name: 'Platform' }, 'the shell sees the same group');

  // A password set by the operator: now the person signs in, and /api/me shows the pushed group.
  t.equal((await cli(s.dataDir, ['user', 'set-password', 'dana.lee@okta.example', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  const token = await s.signin('dana.lee@okta.example');
  const me = await s.call('GET', '/api/me', { token });
  t.ok(JSON.stringify(me.body).includes('Platform'), '/api/me lists the group');
  const key = await cli(s.dataDir, ['--json', 'user', 'api-key', 'add', 'dana.lee@okta.example', '--name', 'laptop']);

  // LDAP: the email-shaped username is the uid, the group its memberOf.
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'admin@example.com']);
  const found = await ldapTool('ldapsearch', [
    '-x',
    '-H',
    url,
    '-D',
    person('admin'),
    '-w',
    PASSWORD,
    '-b',
    BASE,
    '(uid=dana.lee@okta.example)',
    'memberOf',
    'mail',
  ]);
  t.equal(found.code, 0, found.err);
  const entry = ldif(found.out).get(person('dana.lee@okta.example'));
  t.ok(entry?.get('memberOf')?.includes(`cn=Platform,ou=groups,${BASE}`), 'LDAP: memberOf the pushed group');
  t.equal((await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('dana.lee@okta.example'), '-w', PASSWORD])).code, 0, 'LDAP bind by the new uid');

  // Deactivation: Okta's path-less replace.
  const off = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
  t.equal(off.body.active, false);
  t.equal(await signinStatus(s, 'dana.lee@okta.example'), 403, 'sign-in refused: disabled');
  t.equal((await s.call('GET', '/api/me', { token })).status, 401, 'the session ended');
  t.equal((await s.call('GET', '/api/me', { token: key.json.key })).status, 401, 'the API key ended');
  t.equal((await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('dana.lee@okta.example'), '-w', PASSWORD])).code, 49, 'LDAP bind refused');
  const on = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
  t.equal(on.body.active, true);
  t.equal(await signinStatus(s, 'dana.lee@okta.example'), 200, 'enabled again');

  const audit = (await cli(s.dataDir, ['--json', 'audit', '--limit', '200'])).json.events as Json[];
  const viaScim = new Set(audit.filter((e) => e.details.via === 'scim').map((e) => e.event));
  for (const e of [
    'signup',
    'name_changed',
    'group_created',
    'group_member_added',
    'group_member_removed',
    'group_renamed',
    'account_disabled',
    'account_enabled',
  ]) {
    t.ok(viaScim.has(e), `${e} audited via scim`);
  }
});

t.test('Entra ID: externalId lookups, Replace ops with "False", members by value, excludedAttributes, DELETE; the OIDC groups claim', async (t) => {
  const { s, url } = await ldapServer(t);
  const { scim } = await scimClient(s);
  const userName = 'Ann.Ng+ops@contoso.com';

  t.equal((await scim('GET', `/Users?${q(`userName eq "${userName}"`)}`)).body.totalResults, 0);
  const created = await scim('POST', '/Users', {
    schemas: [USER, ENTERPRISE],
    externalId: 'e5a2-0001',
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: 'ann.ng@contoso.com' }],
    meta: { resourceType: 'User' },
    name: { formatted: 'Ann Ng', familyName: 'Ng', givenName: 'Ann' },
    roles: [],
    title: 'Engineer',
    [ENTERPRISE]: { department: 'Ops', manager: { value: 'someone' } },
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const id: string = created.body.id;
  t.equal(created.body.userName, 'ann.ng+ops@contoso.com', 'userName: lower case, + and @ allowed');
  const byExternal = await scim('GET', `/Users?${q('externalId eq "e5a2-0001"')}`);
  t.equal(byExternal.body.Resources[0].id, id, 'found by externalId');
  const byWork = await scim('GET', `/Users?${q('emails[type eq "work"].value eq "ANN.NG@contoso.com"')}`);
  t.equal(byWork.body.totalResults, 1, 'found by work email');

  const patched = await scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'ann.ng@ops.contoso.com' },
      { op: 'Replace', path: 'name.familyName', value: 'Ng-Park' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Platform' },
      { op: 'Replace', path: 'title', value: 'Lead' },
    ],
  });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.match(patched.body, { emails: [{ value: 'ann.ng@ops.contoso.com' }], displayName: 'Ann Ng-Park' }, 'email and name replaced');
  await scimmyReads(patched.body);
  const stale = await scim(
    'PATCH',
    `/Users/${id}`,
    { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: 'X' }] },
    { 'if-match': created.body.meta.version },
  );
  t.match(stale, { status: 412, body: { status: '412' } }, 'If-Match with a stale version: 412');
  const fresh = await scim(
    'PATCH',
    `/Users/${id}`,
    { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'displayName', value: 'Ann Ng' }] },
    { 'if-match': patched.body.meta.version },
  );
  t.equal(fresh.status, 200, 'If-Match with the current version passes');

  const group = await scim('POST', '/Groups', { schemas: [GROUP], externalId: 'g-77', displayName: 'Site Reliability', meta: { resourceType: 'Group' } });
  t.equal(group.status, 201, JSON.stringify(group.body));
  const gid: string = group.body.id;
  t.equal(group.body.externalId, 'g-77', "a group's externalId is kept");
  t.equal((await scim('GET', `/Groups?${q('externalId eq "g-77"')}`)).body.Resources[0].id, gid, 'and found by it');
  // POST /.search (RFC 7644 section 3.4.3): a type's, and the root's across Users and Groups.
  const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
  const searched = await scim('POST', '/Users/.search', { schemas: [SEARCH], filter: 'externalId eq "e5a2-0001"', attributes: ['userName'] });
  t.same(searched.body.Resources, [{ schemas: [USER], id, userName: 'ann.ng+ops@contoso.com' }], '/Users/.search with attributes');
  const everywhere = await scim('POST', '/.search', { schemas: [SEARCH], filter: 'externalId sw "g-" or externalId sw "e5a2"', count: 10 });
  t.same(everywhere.body.Resources.map((r: Json) => r.id).sort(), [id, gid].sort(), '/.search finds a User and a Group');
  const onlyUsers = await scim('POST', '/.search', { schemas: [SEARCH], filter: 'userName eq "ann.ng+ops@contoso.com"' });
  t.equal(onlyUsers.body.totalResults, 1, 'an attribute only Users have finds no Group');
  t.match(
    await scim('POST', '/Users/.search', { schemas: [SEARCH], sortBy: 'userName' }),
    { status: 400, body: { scimType: 'invalidValue' } },
    'sorting is not supported',
  );
  const noMembers = await scim('GET', `/Groups/${gid}?excludedAttributes=members`);
  t.notOk('members' in noMembers.body, 'excludedAttributes=members');
  t.equal((await scim('GET', `/Groups?excludedAttributes=members&${q('displayName eq "site reliability"')}`)).body.totalResults, 1);
  const added = await scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }] });
  t.same(
    added.body.members.map((m: Json) => m.value),
    [id],
  );

  // OIDC: the widened username is preferred_username, the group is in the groups claim.
  t.equal((await cli(s.dataDir, ['user', 'set-password', 'ann.ng@ops.contoso.com', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  const registered = await addClient(s);
  const config = await relyingParty(s, registered);
  const { url: authUrl, verifier } = await authorizationRequest(config, 'openid email profile groups', 'st');
  const browser = await launch(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback: URL | undefined;
  await page.route(`${APP}/**`, (route) => {
    callback = new URL(route.request().url());
    return route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the app' });
  });
  await page.goto(authUrl.href);
  await page.getByLabel('Email', { exact: true }).fill('ann.ng@ops.contoso.com');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${APP}/**`);
  const tokens = await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  const info = await oidc.fetchUserInfo(config, tokens.access_token, id);
  t.match(info, { sub: id, preferred_username: 'ann.ng+ops@contoso.com', email: 'ann.ng@ops.contoso.com', email_verified: true });
  t.ok((info.groups as string[]).includes('Site Reliability'), 'the OIDC groups claim');
  const found = await ldapTool('ldapsearch', [
    '-x',
    '-H',
    url,
    '-D',
    person('admin'),
    '-w',
    PASSWORD,
    '-b',
    `ou=people,${BASE}`,
    '(mail=ann.ng@ops.contoso.com)',
    'uid',
  ]);
  t.same(
    [...ldif(found.out).keys()].map((dn) => dn.toLowerCase()),
    [person('ann.ng\\+ops@contoso.com').toLowerCase()],
    'LDAP: the uid, its + escaped in the DN',
  );

  const gone = await scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: id }] }] });
  t.notOk('members' in gone.body, 'Remove with a value list: no members left (an empty list is left out)');
  const off = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
  t.equal(off.body.active, false, '"False" as a string');
  t.equal(await signinStatus(s, 'ann.ng@ops.contoso.com'), 403, 'sign-in refused: disabled');
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? 'none').catch((err: Error) => err);
  t.ok(refreshed instanceof Error, 'no refresh for a disabled person');

  t.equal((await scim('DELETE', `/Users/${id}`)).status, 204);
  t.equal((await scim('GET', `/Users/${id}`)).status, 404, 'deleted');
  t.equal((await cli(s.dataDir, ['user', 'show', 'ann.ng@ops.contoso.com'])).code, 4, 'gone from the shell too');
  t.equal((await scim('DELETE', `/Groups/${gid}`)).status, 204);
  const audit = (await cli(s.dataDir, ['--json', 'audit'])).json.events as Json[];
  t.equal(audit.filter((e) => e.event === 'account_deleted' && e.account === id && e.details.via === 'scim').length, 1, 'account_deleted audited');
  await context.close();
});

t.test('bad input: each a SCIM Error, nothing half-written', async (t) => {
  const { s } = await ldapServer(t);
  const { scim } = await scimClient(s);
  const ann = (await scim('POST', '/Users', { schemas: [USER], userName: 'ann', emails: [{ value: 'ann@example.com' }] })).body;
  const group = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'team' })).body;
  const before = { accounts: await countRows(s, 'user_account'), groups: await countRows(s, 'usergroup'), members: await countRows(s, 'membership') };
  const version = (await scim('GET', `/Users/${ann.id}`)).body.meta.version;

  const cases: Array<[string, Promise<{ status: number; body: Json }>, number, string | undefined]> = [
    ['malformed filter', scim('GET', `/Users?${q('userName eq')}`), 400, 'invalidFilter'],
    ['unknown attribute in a filter', scim('GET', `/Users?${q('shoeSize eq "9"')}`), 400, 'invalidPath'],
    ['duplicate email', scim('POST', '/Users', { schemas: [USER], userName: 'ann2', emails: [{ value: 'ANN@example.com' }] }), 409, 'uniqueness'],
    ['no email', scim('POST', '/Users', { schemas: [USER], userName: 'nomail' }), 400, 'invalidValue'],
    ['bad userName', scim('POST', '/Users', { schemas: [USER], userName: 'a b@c@d', emails: [{ value: 'x@example.com' }] }), 400, 'invalidValue'],
    [
      'unknown schema',
      scim('POST', '/Users', { schemas: [USER, 'urn:example:custom'], userName: 'zed', emails: [{ value: 'z@example.com' }] }),
      400,
      'invalidValue',
    ],
    ['unknown attribute', scim('POST', '/Users', { schemas: [USER], userName: 'zed', shoeSize: 9, emails: [{ value: 'z@example.com' }] }), 400, 'invalidValue'],
    ['read-only target', scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'id', value: 'x' }] }), 400, 'mutability'],
    [
      'read-only groups',
      scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'groups', value: [{ value: group.id }] }] }),
      400,
      'mutability',
    ],
    ['unknown path', scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'shoeSize', value: 9 }] }), 400, 'invalidPath'],
    ['bad op', scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [{ op: 'move', path: 'displayName', value: 'x' }] }), 400, 'invalidValue'],
    ['no operations', scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [] }), 400, 'invalidValue'],
    ['remove without a path', scim('PATCH', `/Users/${ann.id}`, { schemas: [PATCH], Operations: [{ op: 'remove' }] }), 400, 'noTarget'],
    [
      'the group as its own member (groups nest, never in themselves)',
      scim('PATCH', `/Groups/${group.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: group.id }] }] }),
      409,
      'invalidValue',
    ],
    [
      'an unknown member',
      scim('POST', '/Groups', { schemas: [GROUP], displayName: 'other', members: [{ value: '00000000-0000-4000-8000-000000000000' }] }),
      400,
      'invalidValue',
    ],
    ['a reserved group name', scim('POST', '/Groups', { schemas: [GROUP], displayName: 'administrators' }), 400, 'invalidValue'],
    ['a duplicate group', scim('POST', '/Groups', { schemas: [GROUP], displayName: 'TEAM' }), 409, 'uniqueness'],
    ['stale If-Match on DELETE', scim('DELETE', `/Users/${ann.id}`, undefined, { 'if-match': 'W/"stale"' }), 412, undefined],
    [
      'unknown id',
      scim('PUT', '/Users/00000000-0000-4000-8000-000000000000', { schemas: [USER], userName: 'q', emails: [{ value: 'q@example.com' }] }),
      404,
      undefined,
    ],
    ['not JSON', scim('POST', '/Users', '{"userName": '), 400, undefined],
    [
      '5 MB body',
      scim('POST', '/Users', JSON.stringify({ schemas: [USER], userName: 'big', emails: [{ value: 'big@example.com' }], title: 'x'.repeat(5 * 1024 * 1024) })),
      413,
      undefined,
    ],
  ];
  for (const [what, reply, status, scimType] of cases) {
    const r = await reply;
    t.equal(r.status, status, `${what}: ${status} (${JSON.stringify(r.body)?.slice(0, 200)})`);
    t.match(r.body, { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status) }, `${what}: a SCIM Error`);
    if (scimType) t.equal(r.body.scimType, scimType, `${what}: ${scimType}`);
  }
  const after = { accounts: await countRows(s, 'user_account'), groups: await countRows(s, 'usergroup'), members: await countRows(s, 'membership') };
  t.same(after, before, 'nothing written by a refused request');
  t.equal((await scim('GET', `/Users/${ann.id}`)).body.meta.version, version, 'ann is as she was');

  // PUT replaces: what it leaves out is cleared (externalId), and a PUT of the same body changes nothing.
  const put = await scim('PUT', `/Users/${ann.id}`, {
    schemas: [USER],
    userName: 'ann',
    externalId: 'x-1',
    emails: [{ value: 'ann@example.com' }],
    displayName: 'Ann',
  });
  t.equal(put.body.externalId, 'x-1');
  const cleared = await scim('PUT', `/Users/${ann.id}`, { schemas: [USER], userName: 'ann', emails: [{ value: 'ann@example.com' }], displayName: 'Ann' });
  t.notOk('externalId' in cleared.body, 'externalId cleared by a PUT without it');
  // Email-shaped names up to 128 characters (PostgreSQL's column widened by a migration).
  const long = `${'a'.repeat(60)}.${'b'.repeat(30)}@${'c'.repeat(20)}.example`;
  const made = await scim('POST', '/Users', { schemas: [USER], userName: long, emails: [{ value: 'long@example.com' }] });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.equal(made.body.userName, long);
  // No administrator is deleted or disabled through SCIM (administrators are out of its write reach).
  const admin = (await scim('GET', `/Users?${q('userName eq "admin"')}`)).body.Resources[0];
  t.match(await scim('DELETE', `/Users/${admin.id}`), { status: 403 }, 'the administrator stays');
  t.match(await scim('PATCH', `/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }), { status: 403 });
});

t.test('a provisioned change is a webhook event like any other (via scim)', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const receiver = await startReceiver(t);
  const added = await cli(s.dataDir, ['--json', '--webhook-allow-private', 'loopback', 'webhook', 'add', '--url', receiver.url]);
  receiver.secret = added.json.secret;
  const { scim } = await scimClient(s);
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'hook', emails: [{ value: 'hook@example.com' }] });
  await scim('PATCH', `/Users/${made.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
  await scim('DELETE', `/Users/${made.body.id}`);
  await s.core.settle();
  const events = receiver.received.map((r) => [r.verified?.type, r.verified?.data.via, r.verified?.data.account?.id]);
  t.same(
    events,
    [
      ['account.created', 'scim', made.body.id],
      ['account.disabled', 'scim', made.body.id],
      ['account.deleted', 'scim', made.body.id],
    ],
    'created, disabled, deleted: verified by standardwebhooks, via scim',
  );
});
