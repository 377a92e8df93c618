// POSIX identities in the directory (contract section 25), read with OpenLDAP's ldapsearch: every
// person is also posixAccount (uidNumber, gidNumber of their own number, homeDirectory,
// loginShell, gecos), every managed group posixGroup (gidNumber, memberUid at any depth beside
// member), numbers given once and never again, SSH keys as sshPublicKey, numeric ordering, and a
// username that is not a Linux name served without the POSIX side.
import t, { type Test } from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { cli } from '../helpers/cli';
import { tempDir } from '../helpers/server';
import { BASE, ldapServer, ldapTool, ldif, person } from '../helpers/ldap';
import { PASSWORD } from '../helpers/server';

const group = (name: string) => `cn=${name},ou=groups,${BASE}`;

function keyFile(t: Test, type: string, comment: string): string {
  const dir = tempDir(t);
  const file = path.join(dir, 'id');
  execFileSync('ssh-keygen', ['-q', '-t', ...type.split(' '), '-N', '', '-C', comment, '-f', file]);
  return `${file}.pub`;
}

t.test('people as posixAccount, groups as posixGroup with memberUid through nesting', async (t) => {
  const d = await ldapServer(t);
  const { s, make } = d;
  for (const e of ['ann@example.com', 'bo@example.com', 'bot@example.com']) t.equal((await make(e)).code, 0);
  for (const g of ['ldap-readers', 'staff', 'ops']) t.equal((await cli(s.dataDir, ['group', 'create', g])).code, 0);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  await cli(s.dataDir, ['group', 'add', 'ops', 'ann@example.com']);
  await cli(s.dataDir, ['group', 'add', 'staff', 'bo@example.com']);
  t.equal((await cli(s.dataDir, ['group', 'add-group', 'staff', 'ops'])).code, 0);
  const as = ['-x', '-H', d.url, '-D', person('bot'), '-w', PASSWORD];
  const search = async (base: string, filter: string, ...attributes: string[]) => {
    const r = await ldapTool('ldapsearch', [...as, '-b', base, filter, ...attributes]);
    t.equal(r.code, 0, `${filter}: ${r.err}`);
    return ldif(r.out);
  };

  const people = await search(`ou=people,${BASE}`, '(objectClass=posixAccount)', '*');
  const ann = people.get(person('ann'))!;
  const bo = people.get(person('bo'))!;
  t.ok(ann.get('objectClass')!.includes('posixAccount'));
  const annUid = Number(ann.get('uidNumber')![0]);
  t.ok(annUid >= 10000, 'numbers from 10000');
  t.same(ann.get('gidNumber'), [String(annUid)], "gidNumber: the person's own number");
  t.same(ann.get('homeDirectory'), ['/home/ann']);
  t.same(ann.get('loginShell'), ['/bin/bash'], 'the default shell');
  t.ok(ann.get('gecos'), 'gecos: the name');
  t.not(bo.get('uidNumber')![0], String(annUid), 'each person a number of their own');

  const groups = await search(`ou=groups,${BASE}`, '(objectClass=posixGroup)', 'gidNumber', 'memberUid', 'member');
  const staff = groups.get(group('staff'))!;
  t.same(staff.get('memberUid')?.sort(), ['ann', 'bo'], 'memberUid: the direct member and the one through ops');
  t.same(staff.get('member')?.sort(), [person('bo'), group('ops')].sort(), 'member: direct members only');
  const gids = [...groups.values()].map((g) => g.get('gidNumber')![0]);
  const uids = [...people.values()].map((p) => p.get('uidNumber')![0]);
  t.equal(new Set([...gids, ...uids]).size, gids.length + uids.length, 'no group number is a person number');

  // What sssd and nslcd send.
  const byUid = await search(BASE, `(&(uidNumber=${annUid})(objectClass=posixAccount))`, 'uid');
  t.same([...byUid.keys()], [person('ann')], 'a person by uidNumber');
  const byMemberUid = await search(BASE, '(&(memberUid=ann)(objectClass=posixGroup))', 'cn');
  t.same([...byMemberUid.keys()].sort(), [group('ops'), group('staff'), group('users')].sort(), "rfc2307: ann's groups by memberUid, through nesting");
  const staffGid = staff.get('gidNumber')![0];
  const byGid = await search(BASE, `(&(gidNumber=${staffGid})(objectClass=posixGroup))`, 'cn');
  t.same([...byGid.keys()], [group('staff')], 'a group by gidNumber');
  const ordered = await search(`ou=people,${BASE}`, `(&(objectClass=posixAccount)(uidNumber>=${annUid})(uidNumber<=${annUid}))`, 'uid');
  t.same([...ordered.keys()], [person('ann')], 'uidNumber ordered as a number');
  const none = await search(`ou=people,${BASE}`, '(uidNumber>=99999999)', 'uid');
  t.equal(none.size, 0, '10000 is below 99999999 as a number');

  // The shell and SSH keys.
  t.equal((await cli(s.dataDir, ['user', 'set-shell', 'ann@example.com', '/usr/bin/zsh'])).code, 0);
  const pub = keyFile(t, 'ed25519', 'ann@laptop');
  const added = await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ann@example.com', pub]);
  t.equal(added.code, 0, added.err);
  const again = await search(`ou=people,${BASE}`, '(uid=ann)', 'loginShell', 'sshPublicKey', 'objectClass');
  const a2 = again.get(person('ann'))!;
  t.same(a2.get('loginShell'), ['/usr/bin/zsh']);
  t.same(a2.get('sshPublicKey'), [fs.readFileSync(pub, 'utf8').trim()], 'the key as the .pub file holds it, comment kept');
  t.ok(a2.get('objectClass')!.includes('ldapPublicKey'));

  // A number is never given again: delete bo, make cy.
  const boRef = (await search(`ou=people,${BASE}`, '(uid=bo)', 'entryUUID')).get(person('bo'))!.get('entryUUID')![0];
  t.equal((await s.call('DELETE', `/api/user_account/${boRef}`, { token: s.adminToken })).status, 204);
  await make('cy@example.com');
  const cy = (await search(`ou=people,${BASE}`, '(uid=cy)', 'uidNumber')).get(person('cy'))!;
  t.ok(!uids.includes(cy.get('uidNumber')![0]) && !gids.includes(cy.get('uidNumber')![0]), "cy's number is new, not bo's");
});

t.test('a username that is not a Linux name: served without the POSIX side', async (t) => {
  const d = await ldapServer(t);
  const { s, make } = d;
  await make('bot@example.com');
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  for (const [email, username] of [
    ['upn@example.com', 'upn@contoso.com'],
    ['num@example.com', '1234'],
  ]) {
    t.equal((await make(email)).code, 0);
    const r = await cli(s.dataDir, ['user', 'set-username', email, username]);
    t.equal(r.code, 0, r.err);
    await cli(s.dataDir, ['group', 'add', 'ldap-readers', email]);
  }
  const as = ['-x', '-H', d.url, '-D', person('bot'), '-w', PASSWORD];
  const r = await ldapTool('ldapsearch', [...as, '-b', BASE, '(|(uid=1234)(uid=upn@contoso.com))', '*']);
  const found = ldif(r.out);
  t.equal(found.size, 2, 'both still in the directory for apps');
  for (const entry of found.values()) {
    t.notOk(entry.get('objectClass')!.includes('posixAccount'));
    t.notOk(entry.get('uidNumber'));
  }
  const readers = ldif((await ldapTool('ldapsearch', [...as, '-b', group('ldap-readers'), '(objectClass=*)', 'memberUid', 'member'])).out).get(
    group('ldap-readers'),
  )!;
  t.same(readers.get('memberUid'), ['bot'], 'memberUid lists Linux names only');
  t.equal(readers.get('member')!.length, 3, 'member lists everyone');
  const posix = ldif((await ldapTool('ldapsearch', [...as, '-b', BASE, '(&(objectClass=posixAccount)(uid=1234))', 'uid'])).out);
  t.equal(posix.size, 0);
});

t.test("a username that is a host's own account's (root, ubuntu, cloudsdk…): no POSIX side, no SSH keys served", async (t) => {
  const d = await ldapServer(t);
  const { s, make } = d;
  await make('bot@example.com');
  await make('ann@example.com');
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  // An account made as ubuntu@… (as a guest signing up is): the username made from the address is ubuntu.
  t.equal((await make('ubuntu@example.org')).code, 0);
  // ann renames herself to cloudsdk through her own record, and adds an SSH key.
  const ann = await s.signin('ann@example.com');
  const id = (await s.call('GET', '/api/user_account', { token: ann })).body.data[0].id;
  const rename = (username: string) =>
    s.call('PATCH', `/api/user_account/${id}`, { token: ann, body: { data: { type: 'user_account', id, attributes: { username } } } });
  t.equal((await rename('cloudsdk')).status, 200, 'the username itself is not refused');
  const pub = keyFile(t, 'ed25519', 'attacker');
  t.equal((await cli(s.dataDir, ['user', 'ssh-key', 'add', 'ann@example.com', pub])).code, 0);
  for (const e of ['ann@example.com', 'ubuntu@example.org']) await cli(s.dataDir, ['group', 'add', 'ldap-readers', e]);

  const as = ['-x', '-H', d.url, '-D', person('bot'), '-w', PASSWORD];
  const read = async (filter: string) => ldif((await ldapTool('ldapsearch', [...as, '-b', BASE, filter, '*'])).out);
  for (const name of ['cloudsdk', 'ubuntu']) {
    const entry = (await read(`(uid=${name})`)).get(person(name));
    t.ok(entry, `${name}: still a person in the directory, for apps`);
    t.notOk(entry!.get('objectClass')!.includes('posixAccount'), `${name}: not a posixAccount`);
    t.notOk(entry!.get('objectClass')!.includes('ldapPublicKey'), `${name}: not an ldapPublicKey`);
    t.notOk(entry!.get('uidNumber'), `${name}: no uidNumber`);
    t.notOk(entry!.get('sshPublicKey'), `${name}: no SSH keys`);
    t.equal((await read(`(&(objectClass=posixAccount)(uid=${name}))`)).size, 0, `${name}: not found as sssd asks`);
  }
  const readers = ldif((await ldapTool('ldapsearch', [...as, '-b', group('ldap-readers'), '(objectClass=*)', 'memberUid'])).out).get(group('ldap-readers'))!;
  t.same(readers.get('memberUid')?.sort(), ['bot'], 'memberUid leaves them out');
  // Other names of the kind too, and the systemd- form.
  for (const name of ['root', 'nobody', 'postgres', 'systemd-network']) {
    t.equal((await rename(name)).status, 200, name);
    t.notOk((await read(`(uid=${name})`)).get(person(name))!.get('uidNumber'), `${name}: no uidNumber`);
  }
  // Back to a name of her own: her login, numbers and key return.
  t.equal((await rename('ann')).status, 200);
  const back = (await read('(uid=ann)')).get(person('ann'))!;
  t.ok(back.get('objectClass')!.includes('posixAccount'));
  t.same(back.get('sshPublicKey'), [fs.readFileSync(pub, 'utf8').trim()]);
});

t.test("--posix-id-base 65534 or 65535 is refused, and the counter steps over both (nobody's number)", async (t) => {
  const d = await ldapServer(t);
  const { s, make } = d;
  for (const base of [65534, 65535]) {
    await t.rejects(s.core.directory.posixIdBase(base), { code: 'invalid_input', message: /may not be 6553[45]: 65534 is nobody's/ }, `${base}`);
  }
  t.same(await s.core.directory.posixIdBase(65531), { base: 65531, next: 65531 }, 'a base below them is taken');
  for (const e of ['a1', 'a2', 'a3', 'a4', 'a5']) t.equal((await make(`${e}@example.com`)).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'create', 'g1'])).code, 0);
  const people = await s.db('user_account').whereIn('username', ['a1', 'a2', 'a3', 'a4', 'a5']).orderBy('id').pluck('posix_id');
  t.same(people.map(Number), [65531, 65532, 65533, 65536, 65537], '65534 and 65535 never given');
  t.equal(Number((await s.db('usergroup').where({ name: 'g1' }).first()).posix_id), 65538);
});
