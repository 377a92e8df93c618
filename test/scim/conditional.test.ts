// SCIM writes are conditional writes decided inside their transaction: requests sent at once, not
// in sequence. PATCHes adding different members to one group all land; PATCHes changing different
// attributes of one User all land (each applied to the User as it is when it writes, never to a
// copy read before); of two PATCHes naming the same If-Match one answers 200, the other 412; a
// group change (rename, externalId, adds and removes) is one write, audited once committed, one
// row per change. A group's version is a digest of the whole group, so the version read with
// excludedAttributes=members (Entra's habit) is the one a write accepts.
import t from 'tap';
import { cli } from '../helpers/cli';
import { TEST_STORE, type TestServer, withAdmin } from '../helpers/server';

type Json = Record<string, any>;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function scimClient(s: TestServer) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as Json };
  };
}

/** The audited events that name a group (its reference id is in their details), oldest first. */
const auditedFor = async (s: TestServer, gid: string): Promise<string[]> =>
  (await s.db('audit_event').where('details', 'like', `%${gid}%`).orderBy('id')).map((r: Json) => r.event);

const patch = (...operations: Json[]) => ({ schemas: [PATCH], Operations: operations });

async function people(scim: Awaited<ReturnType<typeof scimClient>>, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const made = await scim('POST', '/Users', { schemas: [USER], userName: `${prefix}${i}@contoso.com`, displayName: `${prefix} ${i}` });
    if (made.status !== 201) throw new Error(JSON.stringify(made.body));
    ids.push(made.body.id);
  }
  return ids;
}

t.test('PATCHes adding different members to one group, sent at once: every member is there, each audited once', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const ids = await people(scim, 8, 'm');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Crew' });
  t.equal(group.status, 201);
  const gid: string = group.body.id;
  const answers = await Promise.all(ids.map((id) => scim('PATCH', `/Groups/${gid}`, patch({ op: 'add', path: 'members', value: [{ value: id }] }))));
  t.same(
    answers.map((a) => a.status),
    ids.map(() => 200),
    'all answered 200',
  );
  const after = await scim('GET', `/Groups/${gid}`);
  t.same(after.body.members.map((m: Json) => m.value).sort(), [...ids].sort(), 'every member added is a member');
  t.equal((await auditedFor(s, gid)).filter((e) => e === 'group_member_added').length, 8, 'one audit row per member added');

  // And removing them at once, each by a value filter, while others are added.
  const more = await people(scim, 4, 'n');
  const mixed = await Promise.all([
    ...ids.slice(0, 4).map((id) => scim('PATCH', `/Groups/${gid}`, patch({ op: 'remove', path: `members[value eq "${id}"]` }))),
    ...more.map((id) => scim('PATCH', `/Groups/${gid}`, patch({ op: 'add', path: 'members', value: [{ value: id }] }))),
  ]);
  t.ok(
    mixed.every((a) => a.status === 200),
    mixed.map((a) => a.status).join(' '),
  );
  const last = await scim('GET', `/Groups/${gid}`);
  t.same(last.body.members.map((m: Json) => m.value).sort(), [...ids.slice(4), ...more].sort(), 'removes and adds sent at once all land');
});

t.test('PATCHes of different attributes of one User, sent at once and without If-Match: none is lost', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const [id] = await people(scim, 1, 'ann');
  const answers = await Promise.all([
    scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'displayName', value: 'Ann Lee' })),
    scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'emails[type eq "work"].value', value: 'ann.lee@contoso.com' })),
    scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'externalId', value: 'ext-1' })),
    scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'active', value: 'False' })),
    scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'userName', value: 'ann.lee@contoso.com' })),
  ]);
  t.same(
    answers.map((a) => a.status),
    [200, 200, 200, 200, 200],
    JSON.stringify(answers.filter((a) => a.status !== 200).map((a) => a.body)),
  );
  const after = await scim('GET', `/Users/${id}`);
  t.match(
    after.body,
    { displayName: 'Ann Lee', emails: [{ value: 'ann.lee@contoso.com' }], externalId: 'ext-1', active: false, userName: 'ann.lee@contoso.com' },
    'every change is kept',
  );
});

t.test('two PATCHes naming the same If-Match, sent at once: one 200, one 412 and unchanged by it', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const [id] = await people(scim, 1, 'bo');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Ops' });
  const gid: string = group.body.id;
  for (const round of [1, 2, 3]) {
    const user = await scim('GET', `/Users/${id}`);
    const users = await Promise.all(
      ['A', 'B'].map((x) =>
        scim('PATCH', `/Users/${id}`, patch({ op: 'replace', path: 'displayName', value: `Bo ${x}${round}` }), { 'if-match': user.body.meta.version }),
      ),
    );
    t.same(users.map((a) => a.status).sort(), [200, 412], `User, round ${round}`);
    const won = users.find((a) => a.status === 200)!;
    t.match(users.find((a) => a.status === 412)!.body, { status: '412' }, 'a SCIM Error');
    t.equal((await scim('GET', `/Users/${id}`)).body.displayName, won.body.displayName, "the winner's change is kept");

    const before = await scim('GET', `/Groups/${gid}`);
    const groups = await Promise.all(
      ['A', 'B'].map((x) =>
        scim('PATCH', `/Groups/${gid}`, patch({ op: 'replace', path: 'displayName', value: `Ops ${x}${round}` }), { 'if-match': before.headers.get('etag')! }),
      ),
    );
    t.same(groups.map((a) => a.status).sort(), [200, 412], `Group, round ${round}`);
  }
  // A DELETE and a PATCH naming the same If-Match at once: one of them.
  const now = await scim('GET', `/Groups/${gid}`);
  const raced = await Promise.all([
    scim('PATCH', `/Groups/${gid}`, patch({ op: 'add', path: 'members', value: [{ value: id }] }), { 'if-match': now.body.meta.version }),
    scim('DELETE', `/Groups/${gid}`, undefined, { 'if-match': now.body.meta.version }),
  ]);
  // The loser answers 412 (the group moved) or 404 (the group is gone).
  const statuses = raced.map((a) => a.status);
  t.ok(
    statuses.filter((c) => c < 300).length === 1 && statuses.every((c) => [200, 204, 404, 412].includes(c)),
    `one of PATCH and DELETE: ${statuses.join(' ')}`,
  );
});

t.test("a group's version read with excludedAttributes=members is the one a write accepts", async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const ids = await people(scim, 2, 'e');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Entra', members: [{ value: ids[0] }] });
  const gid: string = group.body.id;
  const slim = await scim('GET', `/Groups/${gid}?excludedAttributes=members`);
  t.equal(slim.body.members, undefined, 'members left out of the answer');
  t.equal(slim.body.meta.version, group.body.meta.version, 'the same version as the whole group');
  t.equal(slim.headers.get('etag'), group.body.meta.version, 'in the ETag header too');
  const listed = await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Entra"')}&excludedAttributes=members`);
  t.equal(listed.body.Resources[0].meta.version, group.body.meta.version, 'and in a list');
  const patched = await scim('PATCH', `/Groups/${gid}`, patch({ op: 'add', path: 'members', value: [{ value: ids[1] }] }), {
    'if-match': slim.body.meta.version,
  });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.not(patched.body.meta.version, slim.body.meta.version, 'a member added moves the version');
  const stale = await scim('PATCH', `/Groups/${gid}`, patch({ op: 'replace', path: 'displayName', value: 'X' }), { 'if-match': slim.body.meta.version });
  t.equal(stale.status, 412, 'the version before the member was added is stale');
});

t.test('a group change is one write: rename, externalId, adds and removes together, or nothing', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const ids = await people(scim, 3, 'r');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Before', members: [{ value: ids[0] }] });
  const gid: string = group.body.id;
  await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Taken' });
  const rows = (await auditedFor(s, gid)).length;

  // The rename is refused (the name is taken): the adds and the externalId that came with it are not made.
  const refused = await scim(
    'PATCH',
    `/Groups/${gid}`,
    patch(
      { op: 'add', path: 'members', value: [{ value: ids[1] }] },
      { op: 'replace', path: 'externalId', value: 'g-1' },
      { op: 'replace', path: 'displayName', value: 'taken' },
    ),
  );
  t.equal(refused.status, 409, JSON.stringify(refused.body));
  const unchanged = await scim('GET', `/Groups/${gid}`);
  t.same(
    [unchanged.body.displayName, unchanged.body.externalId, unchanged.body.members.map((m: Json) => m.value)],
    ['Before', undefined, [ids[0]]],
    'nothing of it was written',
  );
  t.equal(unchanged.body.meta.version, group.body.meta.version, 'the version did not move');
  t.equal((await auditedFor(s, gid)).length, rows, 'nothing audited');

  const whole = await scim(
    'PATCH',
    `/Groups/${gid}`,
    patch(
      { op: 'replace', path: 'displayName', value: 'After' },
      { op: 'replace', path: 'externalId', value: 'g-1' },
      { op: 'add', path: 'members', value: [{ value: ids[1] }, { value: ids[2] }] },
      { op: 'remove', path: `members[value eq "${ids[0]}"]` },
    ),
    { 'if-match': group.body.meta.version },
  );
  t.equal(whole.status, 200, JSON.stringify(whole.body));
  t.match(whole.body, { displayName: 'After', externalId: 'g-1' });
  t.same(whole.body.members.map((m: Json) => m.value).sort(), [ids[1], ids[2]].sort());
  const events = (await auditedFor(s, gid)).slice(rows);
  t.same(events, ['group_renamed', 'group_member_added', 'group_member_added', 'group_member_removed'], 'one audit row per change');
});

t.test('a group change that fails halfway (a member the store refuses) leaves nothing of it', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const ids = await people(scim, 2, 'h');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Halfway', members: [{ value: ids[0] }] });
  const gid: string = group.body.id;
  const rows = (await auditedFor(s, gid)).length;
  // The store itself refuses the second person's membership: the failure comes after the rename,
  // the externalId and the removal were written in the same change.
  const refused = Number((await s.db('user_account').where({ reference_id: ids[1] }).first()).id);
  if (TEST_STORE === 'postgres') {
    await s.db.raw(`CREATE FUNCTION refuse_member() RETURNS trigger AS $$ BEGIN
      IF NEW.account_id = ${refused} THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await s.db.raw('CREATE TRIGGER refuse_member BEFORE INSERT ON membership FOR EACH ROW EXECUTE FUNCTION refuse_member()');
  } else {
    await s.db.raw(
      `CREATE TRIGGER refuse_member BEFORE INSERT ON membership WHEN NEW.account_id = ${refused} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    );
  }
  const failed = await scim(
    'PATCH',
    `/Groups/${gid}`,
    patch(
      { op: 'replace', path: 'displayName', value: 'Renamed' },
      { op: 'replace', path: 'externalId', value: 'g-9' },
      { op: 'remove', path: `members[value eq "${ids[0]}"]` },
      { op: 'add', path: 'members', value: [{ value: ids[1] }] },
    ),
  );
  t.ok(failed.status >= 500, `the change fails: ${failed.status}`);
  const after = await scim('GET', `/Groups/${gid}`);
  t.same(
    [after.body.displayName, after.body.externalId, after.body.members?.map((m: Json) => m.value)],
    ['Halfway', undefined, [ids[0]]],
    'not renamed, no externalId, nobody removed',
  );
  t.equal(after.body.meta.version, group.body.meta.version, 'the version did not move');
  t.equal((await auditedFor(s, gid)).length, rows, 'nothing audited');
});

// Found by the outsider review: `W/"x", *`, `W/*` and an empty If-Match let a write through as if
// none had been sent.
t.test('an If-Match that is not * or a list of entity tags is refused, never read as any version', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'ivy@contoso.com', displayName: 'Ivy' });
  for (const value of ['W/"x", *', 'W/*', '', 'abc', '"unterminated', 'W/"x",']) {
    const r = await scim('PATCH', `/Users/${made.body.id}`, patch({ op: 'replace', path: 'displayName', value: 'Changed' }), { 'if-match': value });
    t.equal(r.status, 400, `If-Match: ${JSON.stringify(value)} refused`);
    t.equal(r.body.scimType, 'invalidValue');
  }
  t.equal((await scim('GET', `/Users/${made.body.id}`)).body.displayName, 'Ivy', 'nothing changed');
  const current = (await scim('GET', `/Users/${made.body.id}`)).body.meta.version as string;
  const listed = await scim('PATCH', `/Users/${made.body.id}`, patch({ op: 'replace', path: 'displayName', value: 'Ivy 2' }), {
    'if-match': `W/"old", ${current}`,
  });
  t.equal(listed.status, 200, 'a list naming the current version passes');
  const any = await scim('PATCH', `/Users/${made.body.id}`, patch({ op: 'replace', path: 'displayName', value: 'Ivy 3' }), { 'if-match': '*' });
  t.equal(any.status, 200, '* alone passes');
});
