// People a directory source brought are read-only elsewhere: SCIM (a PATCH or PUT changing the
// name or email refused, an unchanged PUT passes; a DELETE of someone still in the directory
// refused), the record API (username), the shell (set-password), and a password-reset link,
// which ends in a clear refusal rather than a changed password.
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { errorCode, withAdmin } from '../helpers/server';
import { startSmtp, tokenIn } from '../helpers/smtp';
import { ADMIN_DN, ADMIN_PASSWORD, groupLdif, personDn, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';

type Json = Record<string, any>;
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

async function synced(t: Test, flags = {}) {
  const slapd = await startSlapd(t);
  await slapd.add(
    personLdif('alice', { cn: 'Alice Liddell', password: 'alice-directory-pw' }) +
      personLdif('bob', { cn: 'Bob Builder', password: 'bob-directory-pw' }) +
      groupLdif('engineers', [personDn('alice'), personDn('bob')]),
  );
  const s = await withAdmin(t, flags);
  const added = await cli(
    s.dataDir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);
  const r = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(r.code, 0, r.err);
  const account = async (email: string) => s.db('user_account').where({ email_key: email }).first();
  const signin = async (email: string, password: string) => (await s.action('user_account', 'signin', { email, password })).status;
  return { slapd, s, account, signin };
}

async function scimClient(s: Awaited<ReturnType<typeof withAdmin>>) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
}

t.test('SCIM: a change to a synced person’s name or email refused, an unchanged PUT passes, a DELETE refused', async (t) => {
  const { slapd, s, account } = await synced(t);
  const scim = await scimClient(s);
  const alice = await account('alice@example.org');
  const id: string = alice.reference_id;
  const got = await scim('GET', `/Users/${id}`);
  t.equal(got.status, 200);
  t.match(got.body, { userName: 'alice', displayName: 'Alice Liddell', active: true });

  const patchName = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Queen of Hearts' }] });
  t.equal(patchName.status, 403, JSON.stringify(patchName.body));
  t.match(patchName.body.detail, /directory source corp/);
  const patchEmail = await scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: 'queen@example.org' }],
  });
  t.equal(patchEmail.status, 403, JSON.stringify(patchEmail.body));
  const patchMail2 = await scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', value: { emails: [{ value: 'queen@example.org', primary: true, type: 'work' }] } }],
  });
  t.equal(patchMail2.status, 403, `a PATCH without a path: ${JSON.stringify(patchMail2.body)}`);
  const patchUser = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userName', value: 'queen' }] });
  t.equal(patchUser.status, 403, JSON.stringify(patchUser.body));

  const { meta: _meta, ...unchanged } = got.body;
  const same = await scim('PUT', `/Users/${id}`, unchanged);
  t.equal(same.status, 200, `an unchanged PUT passes: ${JSON.stringify(same.body)}`);
  const putName = await scim('PUT', `/Users/${id}`, { ...unchanged, displayName: 'Queen of Hearts', name: { formatted: 'Queen of Hearts' } });
  t.equal(putName.status, 403, JSON.stringify(putName.body));
  const putEmail = await scim('PUT', `/Users/${id}`, { ...unchanged, emails: [{ value: 'queen@example.org', primary: true, type: 'work' }] });
  t.equal(putEmail.status, 403, JSON.stringify(putEmail.body));
  const now = await account('alice@example.org');
  t.match(now, { name: 'Alice Liddell', email: 'alice@example.org', username: 'alice' }, 'nothing changed');

  const del = await scim('DELETE', `/Users/${id}`);
  t.equal(del.status, 403, `a DELETE of someone still in the directory: ${JSON.stringify(del.body)}`);
  t.ok(await account('alice@example.org'), 'still here');

  // A synced group: its members and its name are the directory's.
  const engineers = await s.db('usergroup').where({ name: 'engineers' }).first();
  const admin = await account('admin@example.com');
  const addMember = await scim('PATCH', `/Groups/${engineers.reference_id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'add', path: 'members', value: [{ value: admin.reference_id }] }],
  });
  t.equal(addMember.status, 403, `a member added to a synced group: ${JSON.stringify(addMember.body)}`);
  const rename = await scim('PATCH', `/Groups/${engineers.reference_id}`, {
    schemas: [PATCH],
    Operations: [{ op: 'replace', path: 'displayName', value: 'wizards' }],
  });
  t.equal(rename.status, 403, `a synced group renamed: ${JSON.stringify(rename.body)}`);
  const dropGroup = await scim('DELETE', `/Groups/${engineers.reference_id}`);
  t.equal(dropGroup.status, 403, `a synced group deleted: ${JSON.stringify(dropGroup.body)}`);
  t.ok(await s.db('usergroup').where({ id: engineers.id, name: 'engineers' }).first(), 'engineers as it was');

  // Gone from the directory (disabled by the sync): SCIM may delete the account then.
  await slapd.remove(personDn('bob'));
  const r = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.match(r.json.people, { disabled: 1 });
  const bob = await account('bob@example.org');
  const gone = await scim('DELETE', `/Users/${bob.reference_id}`);
  t.equal(gone.status, 204, JSON.stringify(gone.body));
});

t.test('the record API, the shell and a reset link refuse to change a synced person', async (t) => {
  const smtp = await startSmtp(t);
  const { s, account, signin } = await synced(t, { smtpUrl: smtp.url });
  const alice = await account('alice@example.org');
  const patch = (attributes: Json) =>
    s.call('PATCH', `/api/user_account/${alice.reference_id}`, {
      token: s.adminToken,
      body: { data: { type: 'user_account', id: alice.reference_id, attributes }, meta: {} },
    });
  const username = await patch({ username: 'queen' });
  t.equal(username.status, 403, username.text);
  t.match(username.text, /directory source corp/);
  const name = await patch({ name: 'Queen' });
  t.equal(name.status, 403, name.text);

  const setPassword = await cli(s.dataDir, ['user', 'set-password', 'alice@example.org', '--password-env', 'PW'], { env: { PW: 'a brand new password here' } });
  t.not(setPassword.code, 0);
  t.match(setPassword.err, /directory source corp/);
  const setUsername = await cli(s.dataDir, ['user', 'set-username', 'alice@example.org', 'queen']);
  t.not(setUsername.code, 0);
  t.match(setUsername.err, /directory source corp/);

  // Her own session: her name and email are the directory's too.
  const session = await s.signin('alice@example.org', 'alice-directory-pw');
  const own = await s.call('PATCH', `/api/user_account/${alice.reference_id}`, {
    token: session,
    body: { data: { type: 'user_account', id: alice.reference_id, attributes: { name: 'Queen' } }, meta: {} },
  });
  t.equal(own.status, 403, `her own PATCH of her name: ${own.text}`);
  const ownUsername = await s.call('PATCH', `/api/user_account/${alice.reference_id}`, {
    token: session,
    body: { data: { type: 'user_account', id: alice.reference_id, attributes: { username: 'queen' } }, meta: {} },
  });
  t.equal(ownUsername.status, 403, `her own PATCH of her username: ${ownUsername.text}`);
  const email = await s.action('user_account', 'change_email', { password: 'alice-directory-pw', email: 'queen@example.org' }, session);
  t.equal(email.status, 403, `her own change of email: ${email.text}`);
  t.match(email.text, /directory source corp/);

  // A reset link: asked for, then used.
  const asked = await s.action('user_account', 'reset_password_request', { email: 'alice@example.org' });
  t.equal(asked.status, 200, 'the request answers as for anyone');
  await s.core.settle();
  const mail = await smtp.next('alice@example.org', 1, 5000).catch(() => null);
  if (mail === null) {
    t.pass('no reset link is mailed to a person whose password is the directory’s');
  } else {
    const token = tokenIn(mail);
    const reset = await s.action('user_account', 'reset_password', { token, password: 'a reset password 42', passwordConfirm: 'a reset password 42' });
    t.equal(reset.status, 403, `the reset is refused: ${reset.text}`);
    t.equal(errorCode(reset), 'forbidden');
    t.match(reset.text, /directory source corp/, 'and says why');
  }
  const after = await account('alice@example.org');
  t.equal(after.password, '', 'no password set here');
  t.equal(after.auth_version, alice.auth_version, 'sessions untouched');
  t.equal(await signin('alice@example.org', 'a reset password 42'), 401, 'the reset password does not open anything');
  t.equal(await signin('alice@example.org', 'alice-directory-pw'), 200, 'the directory’s does');
  t.match(await account('alice@example.org'), { name: 'Alice Liddell', username: 'alice' });
});
