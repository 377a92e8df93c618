// Nested groups over SCIM: a Group's members hold the groups directly inside it (type Group), a
// User's groups list every group the person is in, direct or indirect (RFC 7643 section 4.1.2),
// each answer read again by scimmy against its schemas. Writes (POST, PUT, PATCH with and without
// value-filter paths) nest and unnest through the core's rules: a cycle is 409 and changes
// nothing, nothing goes inside administrators, and of two PATCHes at once that would make a cycle
// exactly one lands. A push target gets a group's members flattened (people only).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { countRows, type TestServer, withAdmin } from '../helpers/server';
import { startScimTarget } from '../helpers/scim-target';

type Json = Record<string, any>;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function scimClient(s: TestServer) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  const scim = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(path.startsWith('http') ? path : `${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
  const user = async (name: string) => (await scim('POST', '/Users', { schemas: [USER], userName: name, emails: [{ value: `${name}@example.com` }] })).body;
  const group = async (name: string, members: Json[] = []) => {
    const r = await scim('POST', '/Groups', { schemas: [GROUP], displayName: name, members });
    if (r.status !== 201) throw new Error(`${name}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return { scim, user, group };
}

async function scimmyReads(resource: Json): Promise<void> {
  const { default: SCIMMY } = await import('scimmy');
  if (resource.schemas.includes(GROUP)) new SCIMMY.Schemas.Group(resource, 'out');
  else new SCIMMY.Schemas.User(resource, 'out');
}

const q = (filter: string) => `filter=${encodeURIComponent(filter)}`;
const members = (g: Json) => ((g.members ?? []) as Json[]).map((m) => `${m.type}:${m.display ?? m.value}`).sort();
const groupsOf = (u: Json) => ((u.groups ?? []) as Json[]).map((g) => `${g.display}:${g.type}`).sort();
const patch = (...Operations: Json[]) => ({ schemas: [PATCH], Operations });
/** The nesting as the store holds it: edges and closure rows. */
const nesting = async (s: TestServer) => ({ edges: await countRows(s, 'usergroup_nesting'), closure: await countRows(s, 'usergroup_closure') });

t.test("reads: a Group's members hold Groups, a User's groups are direct or indirect; scimmy reads both", async (t) => {
  const s = await withAdmin(t);
  const { scim, user, group } = await scimClient(s);
  const ada = await user('ada');
  const bob = await user('bob');
  await group('db', [{ value: ada.id }, { value: bob.id }]);
  const backend = await group('backend');
  const eng = await group('eng', [{ value: bob.id }]);
  // Nested from the shell: SCIM reads what any front end made.
  for (const [parent, child] of [
    ['eng', 'backend'],
    ['backend', 'db'],
  ]) {
    const r = await cli(s.dataDir, ['group', 'add-group', parent, child]);
    t.equal(r.code, 0, r.err);
  }

  const engRead = await scim('GET', `/Groups/${eng.id}`);
  t.same(members(engRead.body), ['Group:backend', `User:${bob.id}`], 'eng: its person and the group directly inside it (not db, two levels down)');
  const inner = engRead.body.members.find((m: Json) => m.type === 'Group');
  t.same(inner, { value: backend.id, display: 'backend', $ref: `${s.config.publicUrl}/scim/v2/Groups/${backend.id}`, type: 'Group' });
  t.equal((await scim('GET', inner.$ref)).status, 200, "a member group's $ref answers");
  await scimmyReads(engRead.body);

  const adaRead = await scim('GET', `/Users/${ada.id}`);
  t.same(groupsOf(adaRead.body), ['backend:indirect', 'db:direct', 'eng:indirect'], 'ada: db directly, backend and eng through it');
  await scimmyReads(adaRead.body);
  const bobRead = await scim('GET', `/Users/${bob.id}`);
  t.same(groupsOf(bobRead.body), ['backend:indirect', 'db:direct', 'eng:direct'], 'bob: in eng directly and through db: direct');
  await scimmyReads(bobRead.body);

  // Lists: the same answers, paged as before; one user lookup by userName carries the groups.
  const list = await scim('GET', '/Groups?startIndex=2&count=1');
  t.match(list.body, { totalResults: 3, startIndex: 2, itemsPerPage: 1 });
  t.equal(list.body.Resources[0].id, backend.id, 'groups in the order they were made');
  t.same(members(list.body.Resources[0]), ['Group:db']);
  for (const r of (await scim('GET', '/Groups')).body.Resources) await scimmyReads(r);
  const lookup = await scim('GET', `/Users?${q('userName eq "ada"')}`);
  t.same(groupsOf(lookup.body.Resources[0]), groupsOf(adaRead.body));
  for (const r of (await scim('GET', '/Users?count=200')).body.Resources) await scimmyReads(r);
  const searched = await scim('POST', '/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'displayName eq "eng"' });
  t.same(members(searched.body.Resources[0]), members(engRead.body), '/.search answers the same');
  const without = await scim('GET', `/Groups/${eng.id}?excludedAttributes=members`);
  t.notOk('members' in without.body, 'excludedAttributes=members (Entra)');
  t.equal(without.body.meta.version, engRead.body.meta.version, "the version is still the whole group's");

  // The schema says a member may be a Group.
  const schema = (await scim('GET', `/Schemas/${GROUP}`)).body;
  const memberAttr = schema.attributes.find((a: Json) => a.name === 'members');
  t.same(memberAttr.subAttributes.find((a: Json) => a.name === 'type').canonicalValues, ['User', 'Group']);

  // A built-in group nested by the shell is no SCIM Group: not listed as a member, $ref would not answer.
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'eng', 'administrators'])).code, 0);
  t.same(members((await scim('GET', `/Groups/${eng.id}`)).body), ['Group:backend', `User:${bob.id}`], 'administrators inside eng: not a SCIM member');
  const admin = (await scim('GET', `/Users?${q('userName eq "admin"')}`)).body.Resources[0];
  t.same(groupsOf(admin), ['eng:indirect'], 'the administrator is in eng through administrators: indirect');
});

t.test('writes: POST, PUT and PATCH put groups inside groups and take them out, audited via scim', async (t) => {
  const s = await withAdmin(t);
  const { scim, user, group } = await scimClient(s);
  const ada = await user('ada');
  const db = await group('db', [{ value: ada.id }]);
  const cache = await group('cache');

  const made = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'backend', members: [{ value: db.id, type: 'Group' }] });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.same(members(made.body), ['Group:db'], 'POST: a member of type Group');
  await scimmyReads(made.body);
  const backend = made.body;
  t.same(groupsOf((await scim('GET', `/Users/${ada.id}`)).body), ['backend:indirect', 'db:direct']);
  const shown = (await cli(s.dataDir, ['--json', 'group', 'show', 'backend'])).json;
  t.ok(JSON.stringify(shown).includes('db'), 'the shell sees db inside backend');

  // docs/scim.md's PATCH, as written there with the inner group's id filled in.
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'scim.md'), 'utf8');
  const block = /## Nested groups[\s\S]*?```json\n([\s\S]*?)```/.exec(doc);
  t.ok(block, 'docs/scim.md has the PATCH block');
  const fromDocs = await scim('PATCH', `/Groups/${db.id}`, JSON.parse(block![1].replace('<id of the inner group>', cache.id)));
  t.equal(fromDocs.status, 200, JSON.stringify(fromDocs.body));
  t.same(members(fromDocs.body), ['Group:cache', `User:${ada.id}`], "the docs' PATCH puts cache inside db");
  t.equal((await scim('PATCH', `/Groups/${db.id}`, patch({ op: 'remove', path: `members[value eq "${cache.id}"]` }))).status, 200);

  // PATCH add without a type (the store tells a Group from a User), then remove by value filter.
  const added = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'add', path: 'members', value: [{ value: cache.id }] }));
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.same(members(added.body), ['Group:cache', 'Group:db']);
  const removed = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'remove', path: `members[value eq "${db.id}"]` }));
  t.same(members(removed.body), ['Group:cache'], 'remove by value filter');
  t.same(groupsOf((await scim('GET', `/Users/${ada.id}`)).body), ['db:direct'], 'ada is no longer in backend');
  // Entra's habit: remove by listing the members.
  const listedOut = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'Remove', path: 'members', value: [{ value: cache.id }] }));
  t.notOk('members' in listedOut.body, 'remove by listing');
  // Replace: people and groups at once.
  const replaced = await scim(
    'PATCH',
    `/Groups/${backend.id}`,
    patch({
      op: 'replace',
      path: 'members',
      value: [
        { value: ada.id, type: 'User' },
        { value: db.id, type: 'Group' },
      ],
    }),
  );
  t.same(members(replaced.body), ['Group:db', `User:${ada.id}`]);

  // PUT replaces the list: cache in, db out, ada stays.
  const put = await scim('PUT', `/Groups/${backend.id}`, {
    schemas: [GROUP],
    displayName: 'backend',
    members: [{ value: ada.id }, { value: cache.id, type: 'Group', display: 'cache' }],
  });
  t.equal(put.status, 200, JSON.stringify(put.body));
  t.same(members(put.body), ['Group:cache', `User:${ada.id}`]);
  // A PUT of the group as it was read changes nothing.
  const same = await scim('PUT', `/Groups/${backend.id}`, { schemas: [GROUP], displayName: 'backend', members: put.body.members });
  t.equal(same.body.meta.version, put.body.meta.version, 'a PUT of what was read: the same version');

  // A member's type is a label: a User labelled Group is still that User (tester-interop.test.ts
  // has every form). An id that is no SCIM resource is refused.
  const labelled = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'add', path: 'members', value: [{ value: ada.id, type: 'Group' }] }));
  t.equal(labelled.status, 200, JSON.stringify(labelled.body));
  t.same(members(labelled.body), members(put.body), 'ada labelled a Group: the User already inside, nothing changed');
  const users = (await cli(s.dataDir, ['--json', 'group', 'show', 'users'])).json;
  const builtIn = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'add', path: 'members', value: [{ value: users.reference_id }] }));
  t.match(builtIn, { status: 400, body: { scimType: 'invalidValue' } }, 'the built-in users is no SCIM Group');
  const badType = await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'add', path: 'members', value: [{ value: cache.id, type: 'Device' }] }));
  t.match(badType, { status: 400, body: { scimType: 'invalidValue' } });

  const audit = (await cli(s.dataDir, ['--json', 'audit'])).json.events as Json[];
  const nestings = audit
    .filter((e) => ['group_nested', 'group_unnested'].includes(e.event) && e.details.via === 'scim')
    .map((e) => `${e.event}:${e.details.member_group_name}`);
  t.same(
    nestings.sort(),
    [
      ...['group_nested:cache', 'group_nested:cache', 'group_nested:cache', 'group_nested:db', 'group_nested:db'],
      ...['group_unnested:cache', 'group_unnested:cache', 'group_unnested:db', 'group_unnested:db'],
    ].sort(),
    'each nesting and unnesting audited once, via scim',
  );
  t.equal((await scim('DELETE', `/Groups/${cache.id}`)).status, 204, 'a group inside another can be deleted');
  t.same(members((await scim('GET', `/Groups/${backend.id}`)).body), [`User:${ada.id}`]);
});

t.test('refusals: a cycle by PATCH is 409 and changes nothing; nothing goes inside administrators; depth past 10', async (t) => {
  const s = await withAdmin(t);
  const { scim, user, group } = await scimClient(s);
  const ann = await user('ann');
  const a = await group('a');
  const b = await group('b', [{ value: a.id, type: 'Group' }]);
  const c = await group('c', [{ value: b.id, type: 'Group' }]);
  const before = { ...(await nesting(s)), members: await countRows(s, 'membership'), groups: await countRows(s, 'usergroup') };
  const version = (await scim('GET', `/Groups/${a.id}`)).body.meta.version;

  // c is above a (a in b in c): c inside a is a cycle. The rename and the person in the same PATCH are not made either.
  const cycle = await scim(
    'PATCH',
    `/Groups/${a.id}`,
    patch(
      { op: 'replace', path: 'displayName', value: 'renamed' },
      { op: 'add', path: 'members', value: [{ value: ann.id }] },
      { op: 'add', path: 'members', value: [{ value: c.id, type: 'Group' }] },
    ),
  );
  t.match(
    cycle,
    { status: 409, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '409', scimType: 'invalidValue' } },
    JSON.stringify(cycle.body),
  );
  t.match(cycle.body.detail, /^a cycle: a is already inside c/, 'the detail names the groups as they are');
  const put = await scim('PUT', `/Groups/${a.id}`, { schemas: [GROUP], displayName: 'a', members: [{ value: b.id }] });
  t.match(put, { status: 409, body: { scimType: 'invalidValue' } }, 'a PUT making a cycle too');
  const self = await scim('PATCH', `/Groups/${a.id}`, patch({ op: 'add', path: 'members', value: [{ value: a.id }] }));
  t.match(self, { status: 409, body: { scimType: 'invalidValue' } }, 'a group inside itself');
  const after = { ...(await nesting(s)), members: await countRows(s, 'membership'), groups: await countRows(s, 'usergroup') };
  t.same(after, before, 'nothing written');
  t.equal((await scim('GET', `/Groups/${a.id}`)).body.meta.version, version, 'a is as it was');

  // administrators is out of SCIM's write reach: no Group resource to write to, and no member either.
  const admins = (await cli(s.dataDir, ['--json', 'group', 'show', 'administrators'])).json;
  const into = await scim('PATCH', `/Groups/${admins.reference_id}`, patch({ op: 'add', path: 'members', value: [{ value: a.id, type: 'Group' }] }));
  t.match(into, { status: 404, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'] } }, 'PATCH of administrators: no such Group');
  const putInto = await scim('PUT', `/Groups/${admins.reference_id}`, { schemas: [GROUP], displayName: 'administrators', members: [{ value: a.id }] });
  t.equal(putInto.status, 404, 'PUT of administrators: no such Group');
  const asMember = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'holder', members: [{ value: admins.reference_id, type: 'Group' }] });
  t.match(asMember, { status: 400, body: { scimType: 'invalidValue' } }, 'administrators as a member: no such Group');
  t.same({ ...(await nesting(s)), groups: await countRows(s, 'usergroup') }, { edges: before.edges, closure: before.closure, groups: before.groups });
  t.equal((await cli(s.dataDir, ['--json', 'group', 'show', 'administrators'])).json.members?.length ?? 1, 1, 'administrators: its one person');

  // A chain of 11 groups (10 nestings) is the most; a POST that would make 12 is refused and makes no group.
  let below = c;
  for (const name of ['d', 'e', 'f', 'g', 'h', 'i', 'j', 'k']) below = await group(name, [{ value: below.id }]);
  const tooDeep = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'l', members: [{ value: below.id }] });
  t.match(tooDeep, { status: 409, body: { scimType: 'invalidValue' } }, JSON.stringify(tooDeep.body));
  t.equal((await scim('GET', `/Groups?${q('displayName eq "l"')}`)).body.totalResults, 0, 'the refused group was not made');
});

t.test('two PATCHes at once that would make a cycle (a into b, b into a): exactly one lands', async (t) => {
  const s = await withAdmin(t);
  const { scim, group } = await scimClient(s);
  for (let round = 0; round < 5; round++) {
    const a = await group(`a${round}`);
    const b = await group(`b${round}`);
    const replies = await Promise.all([
      scim('PATCH', `/Groups/${a.id}`, patch({ op: 'add', path: 'members', value: [{ value: b.id, type: 'Group' }] })),
      scim('PATCH', `/Groups/${b.id}`, patch({ op: 'add', path: 'members', value: [{ value: a.id, type: 'Group' }] })),
    ]);
    t.same(replies.map((r) => r.status).sort(), [200, 409], `round ${round}: one 200, one 409`);
    t.equal(replies.find((r) => r.status === 409)?.body.scimType, 'invalidValue');
    const [aNow, bNow] = await Promise.all([scim('GET', `/Groups/${a.id}`), scim('GET', `/Groups/${b.id}`)]);
    t.equal(members(aNow.body).length + members(bNow.body).length, 1, `round ${round}: one group inside the other, not both`);
  }
  t.same(await nesting(s), { edges: 5, closure: 5 }, 'the store: five edges, their closure');
});

t.test('push: a group is sent to a target with its members flattened; nesting moves people in and out of its scope', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const { scim, user, group } = await scimClient(s);
  const [ada, bob, cy] = [await user('ada'), await user('bob'), await user('cy')];
  const backend = await group('backend', [{ value: ada.id }]);
  const eng = await group('eng', [{ value: bob.id }, { value: backend.id, type: 'Group' }]);
  const ops = await group('ops', [{ value: cy.id }]);
  const target = await startScimTarget(t);
  const added = await cli(
    s.dataDir,
    ['--json', '--webhook-allow-private', 'loopback', 'scim', 'target', 'add', '--url', target.url, '--token-stdin', '--group', 'eng', '--name', 'app'],
    {
      stdin: `${target.token}\n`,
    },
  );
  t.equal(added.code, 0, added.err);
  await s.core.settle();
  const there = () => ({
    users: [...target.store.users.values()].map((u) => u.userName).sort(),
    eng: ([...target.store.groups.values()].find((g) => g.displayName === 'eng')?.members ?? []).map(
      (m: Json) => [...target.store.users.values()].find((u) => u.id === m.value)?.userName ?? `?${m.type ?? ''}`,
    ),
  });
  t.same(there(), { users: ['ada', 'bob'], eng: ['ada', 'bob'] }, 'ada (in eng through backend) is pushed, and a member of eng there');
  t.same(
    [...target.store.groups.values()].map((g) => g.displayName),
    ['eng'],
    "only the target's group",
  );

  // ops into eng by SCIM: cy comes into scope and into eng's members.
  t.equal((await scim('PATCH', `/Groups/${eng.id}`, patch({ op: 'add', path: 'members', value: [{ value: ops.id }] }))).status, 200);
  await s.core.settle();
  t.same(there(), { users: ['ada', 'bob', 'cy'], eng: ['ada', 'bob', 'cy'] }, 'nested: cy pushed');

  // A person into a group two levels down: eng there gains them.
  const dan = await user('dan');
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'backend', 'ops'])).code, 0);
  t.equal((await scim('PATCH', `/Groups/${ops.id}`, patch({ op: 'add', path: 'members', value: [{ value: dan.id }] }))).status, 200);
  await s.core.settle();
  t.same(there(), { users: ['ada', 'bob', 'cy', 'dan'], eng: ['ada', 'bob', 'cy', 'dan'] }, 'dan, in ops in backend in eng, is in eng there');

  // Out again: ops leaves eng and backend; cy and dan leave the target.
  t.equal((await scim('PATCH', `/Groups/${eng.id}`, patch({ op: 'remove', path: `members[value eq "${ops.id}"]` }))).status, 200);
  t.equal((await scim('PATCH', `/Groups/${backend.id}`, patch({ op: 'remove', path: `members[value eq "${ops.id}"]` }))).status, 200);
  await s.core.settle();
  t.same(there(), { users: ['ada', 'bob'], eng: ['ada', 'bob'] }, 'unnested: cy and dan gone from the app');

  // A sync agrees with what the events did.
  t.equal((await cli(s.dataDir, ['--json', 'scim', 'target', 'sync', 'app'])).code, 0);
  await s.core.settle();
  t.same(there(), { users: ['ada', 'bob'], eng: ['ada', 'bob'] });
});
