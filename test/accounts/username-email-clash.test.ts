// A username names one account, whichever column it is matched against: a username that is
// another account's email is refused, and an email that is another account's username is refused,
// on every path that sets either (signup, the record API, the shell, SCIM, change_email). An LDAP
// `uid=ann@example.com` so never names bob. And every way in leaves the same success record: a
// directory bind is audited signin_ok (method ldap) as a sign-in is.
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, person } from '../helpers/ldap';

t.test("a username that is another account's email, or an email that is another's username, is refused", async (t) => {
  const { s, url, make } = await ldapServer(t);
  await make('ann@example.com');
  await make('bob@example.com');
  const bob = await s.db('user_account').where({ email: 'bob@example.com' }).first();
  const bobToken = await s.signin('bob@example.com');
  const patch = (username: string) =>
    s.call('PATCH', `/api/user_account/${bob.reference_id}`, {
      token: bobToken,
      body: { data: { type: 'user_account', id: bob.reference_id, attributes: { username } } },
    });

  const clash = await patch('ann@example.com');
  t.equal(clash.status, 409, "bob may not take ann's email as his username");
  t.equal((await cli(s.dataDir, ['user', 'set-username', 'bob@example.com', 'ANN@example.com'])).code, 3, 'nor from the shell (any case)');
  t.equal((await patch('bob@example.com')).status, 200, 'his own email is his to take');

  // SCIM: a new person whose userName is someone else's email.
  const token = (await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp'])).json.token as string;
  const scim = (method: string, path: string, body: unknown) =>
    fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      body: JSON.stringify(body),
    });
  const made = await scim('POST', '/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: 'ann@example.com',
    emails: [{ value: 'mallory@example.com', primary: true }],
  });
  t.equal(made.status, 409, 'SCIM: a userName that is another email');
  t.equal(((await made.json()) as { scimType: string }).scimType, 'uniqueness');

  // Now the other way: carl takes the username dora@example.com; nobody may then have that email.
  await make('carl@example.com');
  t.equal((await cli(s.dataDir, ['user', 'set-username', 'carl@example.com', 'dora@example.com'])).code, 0);
  const signup = await s.signup('dora@example.com', PASSWORD, s.adminToken);
  t.equal(signup.status, 409, "an account whose email is carl's username");
  const annToken = await s.signin('ann@example.com');
  const moved = await s.action('user_account', 'change_email', { password: PASSWORD, email: 'Dora@example.com' }, annToken);
  t.equal(moved.status, 409, "ann may not move to carl's username");
  const scimUser = await (
    await scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'eve',
      emails: [{ value: 'eve@example.com', primary: true }],
    })
  ).json();
  const scimMove = await scim('PATCH', `/Users/${(scimUser as { id: string }).id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'emails[primary eq true].value', value: 'dora@example.com' }],
  });
  t.equal(scimMove.status, 409, "SCIM may not move eve to carl's username");

  // The directory names one account for each uid.
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'ann@example.com']);
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'ann@example.com', '--name', 'wiki']);
  const found = await ldapTool('ldapsearch', [
    '-x',
    '-LLL',
    '-H',
    url,
    '-D',
    person('ann'),
    '-w',
    app.json.secret,
    '-b',
    BASE,
    '(uid=dora@example.com)',
    'mail',
  ]);
  t.equal(found.code, 0, found.err);
  t.equal((found.out.match(/^dn:/gm) ?? []).length, 1, 'one entry');
  t.match(found.out, /mail: carl@example.com/, 'and it is carl');
});

t.test('a directory bind is audited as every sign-in is', async (t) => {
  const { s, url, make } = await ldapServer(t);
  await make('fay@example.com');
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'fay@example.com', '--name', 'nas']);
  const fay = await s.db('user_account').where({ email: 'fay@example.com' }).first();
  const bound = await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('fay'), '-w', app.json.secret]);
  t.equal(bound.code, 0, bound.err);
  const rows = await s.db('audit_event').where({ event: 'signin_ok', account: fay.reference_id });
  t.equal(rows.length, 1, 'one success record');
  t.equal(JSON.parse(rows[0].details).method, 'ldap');
  t.equal(JSON.parse(rows[0].details).via, 'ldap');
  const refused = await ldapTool('ldapwhoami', ['-x', '-H', url, '-D', person('fay'), '-w', 'wrong']);
  t.equal(refused.code, 49);
  t.equal((await s.db('audit_event').where({ event: 'signin_failed', account: fay.reference_id })).length, 1, 'and the failure, as before');
});
