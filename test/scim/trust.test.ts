// What a SCIM token may not do, whatever it sends: change, replace or delete an administrator,
// make or end an administrator through the administrators group, or reach the prototype chain
// through a PATCH path or a body key (the server stays up, every later request answers). A change
// of email of an account with a way in of its own tells the old address; the audit names the token.
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, type TestServer, withAdmin } from '../helpers/server';

type Json = Record<string, any>;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function scimClient(s: TestServer) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'entra']);
  const token: string = made.json.token;
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
}

t.test('administrators are out of a SCIM token write reach; reads still list them', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const admin = (await scim('GET', `/Users?filter=${encodeURIComponent('emails.value eq "admin@example.com"')}`)).body.Resources[0] as Json;
  t.ok(admin, 'the administrator is listed');
  const before = await s.db('user_account').where({ reference_id: admin.id }).first();

  const patched = await scim('PATCH', `/Users/${admin.id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'attacker@evil.example' }],
  });
  t.equal(patched.status, 403, 'PATCH refused');
  t.same(
    patched.body.schemas,
    ['urn:ietf:params:scim:api:messages:2.0:Error', 'urn:gatehouse:params:scim:api:messages:2.0:Error'],
    'as a SCIM Error, with the extension that says which rule refused',
  );
  t.same(patched.body['urn:gatehouse:params:scim:api:messages:2.0:Error'], { reason: 'scim_may_not_touch_administrators' });
  t.equal(patched.body.status, '403');
  const put = await scim('PUT', `/Users/${admin.id}`, {
    schemas: [USER],
    userName: admin.userName,
    emails: [{ value: 'attacker@evil.example', primary: true }],
  });
  t.equal(put.status, 403, 'PUT refused');
  const deactivate = await scim('PATCH', `/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
  t.equal(deactivate.status, 403, 'deactivation refused');
  t.equal((await scim('DELETE', `/Users/${admin.id}`)).status, 403, 'DELETE refused');
  const after = await s.db('user_account').where({ reference_id: admin.id }).first();
  t.same(after, before, 'nothing about the administrator changed');

  // Nor may a token make someone an administrator (or end one) through the administrators group.
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'mallory@evil.example', emails: [{ value: 'mallory@evil.example', primary: true }] });
  t.equal(made.status, 201);
  const groups = (await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "administrators"')}`)).body.Resources as Json[];
  if (groups.length > 0) {
    const add = await scim('PATCH', `/Groups/${groups[0].id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'add', path: 'members', value: [{ value: made.body.id }] }],
    });
    t.equal(add.status, 403, 'no administrator made by SCIM');
    const remove = await scim('PATCH', `/Groups/${groups[0].id}`, {
      schemas: [PATCH],
      Operations: [{ op: 'remove', path: `members[value eq "${admin.id}"]` }],
    });
    t.equal(remove.status, 403, 'none ended by SCIM');
  }
  const admins = await s
    .db('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where('g.system_role', 'administrators')
    .count({ n: '*' })
    .first();
  t.equal(Number(admins?.n), 1, 'still one administrator');
});

t.test('SCIM moving a person with a password to a new email tells the old address; the audit names the token', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  t.equal((await s.signup('ann@example.com', PASSWORD, s.adminToken)).status, 200, 'an administrator makes an account with a password');
  const ann = (await scim('GET', `/Users?filter=${encodeURIComponent('emails.value eq "ann@example.com"')}`)).body.Resources[0] as Json;
  const moved = await scim('PATCH', `/Users/${ann.id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'ann@new.example' }],
  });
  t.equal(moved.status, 200, moved.body.detail);
  const mails = await s.db('delivery').where({ kind: 'mail', topic: 'email_moved' });
  t.equal(mails.length, 1, 'one notice queued');
  const message = JSON.parse(mails[0].payload);
  t.equal(message.to, 'ann@example.com', 'to the old address');
  t.match(message.text, /ann@new\.example/, 'naming the new one');

  // An account made by SCIM has no way in of its own yet: nobody to tell.
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'bo@example.com', emails: [{ value: 'bo@example.com', primary: true }] });
  await scim('PATCH', `/Users/${made.body.id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'bo@new.example' }],
  });
  t.equal((await s.db('delivery').where({ kind: 'mail', topic: 'email_moved' })).length, 1, 'no notice for an account without a password or passkey');

  const audit = await s.db('audit_event').where({ event: 'email_changed', account: ann.id }).first();
  t.equal(JSON.parse(audit.details).scim_token, 'entra', 'the audit row names the SCIM token');
  t.equal(JSON.parse(audit.details).via, 'scim');
});

/** Every way a body or path could reach Object.prototype, and a check that it did not. */
const POLLUTERS: Array<{ what: string; body: (id: string) => unknown; path?: string }> = [
  { what: 'path name.__proto__.isAdmin', body: () => ({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'name.__proto__.isAdmin', value: true }] }) },
  {
    what: 'path name.constructor.prototype.zz',
    body: () => ({ schemas: [PATCH], Operations: [{ op: 'add', path: 'name.constructor.prototype.zz', value: 'x' }] }),
  },
  { what: 'path __proto__.zz', body: () => ({ schemas: [PATCH], Operations: [{ op: 'add', path: '__proto__.zz', value: 'x' }] }) },
  { what: 'path in a value filter', body: () => ({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'emails[__proto__ eq "x"].value', value: 'x' }] }) },
  {
    what: 'path with the schema URN',
    body: () => ({ schemas: [PATCH], Operations: [{ op: 'replace', path: `${USER}:name.__PROTO__.zz`, value: 'x' }] }),
  },
  { what: 'dotted key in a path-less value', body: () => ({ schemas: [PATCH], Operations: [{ op: 'replace', value: { '__proto__.zz': 'x' } }] }) },
  { what: 'key in a path-less value', body: () => `{"schemas":["${PATCH}"],"Operations":[{"op":"replace","value":{"__proto__":{"zz":"x"}}}]}` },
  {
    what: 'constructor key in a value',
    body: () => ({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'name', value: { constructor: { prototype: { zz: 'x' } } } }] }),
  },
];

t.test('no PATCH path or body key reaches the prototype chain; the server keeps answering', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'cy@example.com', emails: [{ value: 'cy@example.com', primary: true }] });
  for (const p of POLLUTERS) {
    const r = await scim('PATCH', `/Users/${made.body.id}`, p.body(made.body.id));
    t.equal(r.status, 400, `${p.what}: 400`);
    t.match(r.body.scimType, /^(invalidPath|invalidValue)$/, `${p.what}: ${r.body.scimType}`);
    t.equal(({} as Json).isAdmin, undefined, `${p.what}: Object.prototype untouched`);
    t.equal(({} as Json).zz, undefined);
    t.equal((await fetch(`${s.url}/ping`)).status, 200, `${p.what}: the server still answers`);
  }
  // POST and PUT bodies, and a search body.
  const raw = `{"schemas":["${USER}"],"userName":"dee@example.com","__proto__":{"isAdmin":true}}`;
  t.equal((await scim('POST', '/Users', raw)).status, 400, 'a POST body with __proto__');
  t.equal((await scim('PUT', `/Users/${made.body.id}`, raw)).status, 400, 'a PUT body with __proto__');
  t.equal((await scim('POST', '/.search', `{"filter":"userName pr","__proto__":{"x":1}}`)).status, 400, 'a search body');
  t.equal(({} as Json).isAdmin, undefined);
  t.equal((await scim('GET', `/Users/${made.body.id}`)).status, 200, 'SCIM still answers');
});

t.test('every JSON body of Gatehouse refuses prototype keys', async (t) => {
  const s = await withAdmin(t);
  const send = (path: string, raw: string, token?: string) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: raw,
    });
  const bodies = [
    '{"attributes":{"email":"x@example.com","__proto__":{"isAdmin":true}}}',
    '{"__proto__":{"isAdmin":true}}',
    '{"attributes":{"constructor":{"prototype":{"isAdmin":true}}}}',
    '{"data":{"type":"user_account","attributes":{"name":"x","prototype":1}}}',
    '{"a":[{"b":{"__proto__":{"isAdmin":true}}}]}',
  ];
  for (const raw of bodies) {
    for (const path of ['/action/user_account/signin', '/action/user_account/signup', '/api/user_account']) {
      const r = await send(path, raw, s.adminToken);
      t.equal(r.status, 400, `${path} ${raw.slice(0, 40)}: 400`);
      t.match(await r.text(), /invalid_input/);
    }
  }
  t.equal(({} as Json).isAdmin, undefined, 'Object.prototype untouched');
  t.equal((await fetch(`${s.url}/ping`)).status, 200, 'the server still answers');
  // An ordinary body still works.
  t.equal((await s.action('user_account', 'signin', { email: 'admin@example.com', password: 'correct horse battery staple' })).status, 200);
});

// Found by the outsider review of the packaged executable.
t.test('a filter naming a prototype key is refused (it answered 500, or matched everyone)', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  for (const filter of ['__proto__ pr', 'constructor pr', '__PROTO__ eq "x"', 'emails[constructor pr]', 'emails[__proto__ eq "x"]', 'name.constructor pr']) {
    const users = await scim('GET', `/Users?filter=${encodeURIComponent(filter)}`);
    t.equal(users.status, 400, `Users: ${filter}`);
    t.equal(users.body.scimType, 'invalidPath');
    t.equal((await scim('GET', `/Groups?filter=${encodeURIComponent(filter)}`)).status, 400, `Groups: ${filter}`);
    t.equal((await scim('POST', '/.search', { filter })).status, 400, `search: ${filter}`);
  }
  t.equal((await fetch(`${s.url}/ping`)).status, 200, 'the server still answers');
});

t.test('another spelling of the same address is a change of email: audited, and the old address told', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  t.equal((await s.signup('mıke@example.com', PASSWORD, s.adminToken)).status, 200);
  const mike = (await scim('GET', `/Users?filter=${encodeURIComponent('emails.value eq "mike@example.com"')}`)).body.Resources[0] as Json;
  const moved = await scim('PATCH', `/Users/${mike.id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'MIKE@example.com' }],
  });
  t.equal(moved.status, 200, moved.body?.detail);
  t.equal((await s.db('user_account').where({ reference_id: mike.id }).first()).email, 'MIKE@example.com');
  const mails = await s.db('delivery').where({ kind: 'mail', topic: 'email_moved' });
  t.equal(mails.length, 1, 'the old address is told');
  t.equal(JSON.parse(mails[0].payload).to, 'mıke@example.com');
  t.ok(await s.db('audit_event').where({ event: 'email_changed', account: mike.id }).first(), 'and it is audited');
});

t.test('a PATCH path naming a sub-attribute the schema does not have is refused, not dropped', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const made = await scim('POST', '/Users', { schemas: [USER], userName: 'gil@example.com', emails: [{ value: 'gil@example.com', primary: true }] });
  for (const path of ['name.toString', 'name.foo', 'emails[type eq "work"].toString', 'emails.bogus', 'userName.x']) {
    const r = await scim('PATCH', `/Users/${made.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path, value: 'x' }] });
    t.equal(r.status, 400, `${path}: refused`);
    t.equal(r.body.scimType, 'invalidPath');
  }
  for (const [path, value] of [
    ['name.givenName', 'Gil'],
    ['emails[type eq "work"].value', 'gil@new.example'],
    ['name.familyName', 'Ray'],
  ]) {
    const r = await scim('PATCH', `/Users/${made.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path, value }] });
    t.equal(r.status, 200, `${path}: applied`);
  }
  t.equal((await scim('GET', `/Users/${made.body.id}`)).body.name.formatted, 'Gil Ray');
});
