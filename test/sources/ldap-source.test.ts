// A directory source (LDAP) against Debian's slapd: people and groups synced in (nesting kept),
// a rename there an update here, a person gone disabled and back enabled, a group gone removed,
// sign-in with the directory's password (a bind per sign-in; a password changed there works at
// once), the directory stopped (a sync fails and disables no one, a sign-in fails clearly without
// a lockout), accounts read-only elsewhere, --keep-passwords outliving the source, and TLS.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, groupDn, groupLdif, personDn, personLdif, startSlapd, SUFFIX, type Slapd } from '../helpers/slapd';

type S = Awaited<ReturnType<typeof withAdmin>>;

const addSource = (s: S, slapd: Slapd, extra: string[] = [], url = slapd.url) =>
  cli(
    s.dataDir,
    ['--json', 'source', 'add', 'ldap', '--name', 'corp', '--url', url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX, ...extra],
    {
      env: { BINDPW: ADMIN_PASSWORD },
    },
  );

const sync = async (s: S) => cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);

const account = async (s: S, email: string) => s.db('user_account').where({ email_key: email }).first();

const groupsOf = async (s: S, email: string): Promise<string[]> => {
  const r = await cli(s.dataDir, ['--json', 'user', 'show', email]);
  return (r.json.groups as Array<{ name: string }>).map((g) => g.name).sort();
};

async function directory(t: Test) {
  const slapd = await startSlapd(t);
  await slapd.add(
    personLdif('alice', { cn: 'Alice Liddell', password: 'alice-directory-pw' }) +
      personLdif('bob', { cn: 'Bob Builder', password: 'bob-directory-pw' }) +
      personLdif('carol', { cn: 'Carol Danvers', password: 'carol-directory-pw' }) +
      groupLdif('engineers', [personDn('alice'), personDn('bob')]) +
      groupLdif('staff', [personDn('carol'), groupDn('engineers')]),
  );
  return slapd;
}

t.test('a sync brings people and groups, nesting kept; people sign in with the directory password', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  const added = await addSource(s, slapd);
  t.equal(added.code, 0, added.err);
  t.equal(added.json.uid_attribute, 'uid');
  t.equal(added.json.id_attribute, 'entryUUID');
  t.notOk(JSON.stringify(added.json).includes(ADMIN_PASSWORD), 'the bind password is never shown');

  const first = await sync(s);
  t.equal(first.code, 0, first.err);
  t.match(first.json.people, { created: 3, skipped: 0 });
  t.match(first.json.groups, { created: 2 });
  t.match(first.json.nestings, { added: 1 });
  const alice = await account(s, 'alice@example.org');
  t.match(alice, { username: 'alice', name: 'Alice Liddell' });
  t.ok(alice.email_verified, 'the directory vouches for the mail');
  t.same(
    await groupsOf(s, 'alice@example.org'),
    ['Home group of Alice Liddell', 'engineers', 'staff', 'users'].sort(),
    'in engineers, and in staff through it',
  );

  const again = await sync(s);
  t.match(again.json.people, { created: 0, updated: 0, unchanged: 3 }, 'the same directory again changes nothing');
  t.match(again.json.members, { added: 0, removed: 0 });

  // Sign-in: a bind as the person, per sign-in.
  t.equal((await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' })).status, 200);
  t.equal((await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'wrong' })).status, 401);
  t.equal(
    (await s.action('user_account', 'signin', { email: 'alice@example.org', password: '' })).status,
    401,
    'an empty password is refused (never an anonymous bind)',
  );
  t.equal(
    (await s.action('user_account', 'signin', { email: 'alice@example.org', password: '\u0000' })).status,
    401,
    'nor a password a C string reads as empty (found by an outside review)',
  );
  await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' });
  await s.core.settle();
  const events = (await cli(s.dataDir, ['--json', 'audit', '--limit', '300'])).json.events as Array<{ event: string; details?: Record<string, unknown> }>;
  t.equal(events.filter((e) => e.event === 'imported_signin').length, 1, 'the first sign-in is audited as such, once');
  t.equal(events.filter((e) => e.event === 'account_imported').length, 3);
  t.ok(events.some((e) => e.event === 'source_synced'));

  // A password changed in the directory works at once; the old one no longer does.
  await slapd.modify(`dn: ${personDn('bob')}\nchangetype: modify\nreplace: userPassword\nuserPassword: bob-new-pw\n`);
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.org', password: 'bob-directory-pw' })).status, 401);
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.org', password: 'bob-new-pw' })).status, 200);
  t.equal((await account(s, 'bob@example.org')).password, '', 'no hash is copied without --keep-passwords');

  const list = await cli(s.dataDir, ['--json', 'source', 'list']);
  t.match(list.json.sources[0], { name: 'corp', people: 3, groups: 2, last_status: 'ok' });
});

t.test('renames, departures, returns and groups gone', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd)).code, 0);
  await sync(s);
  const before = await account(s, 'bob@example.org');

  // Renamed (a new RDN and uid, a new mail): the same account, brought up to date.
  await slapd.modify(`dn: ${personDn('bob')}\nchangetype: modrdn\nnewrdn: uid=robert\ndeleteoldrdn: 1\n`);
  await slapd.modify(`dn: ${personDn('robert')}\nchangetype: modify\nreplace: mail\nmail: robert@example.org\n-\nreplace: cn\ncn: Robert Builder\n`);
  // As Active Directory (or slapd's refint overlay) does: the group names the new DN.
  await slapd.modify(
    `dn: ${groupDn('engineers')}\nchangetype: modify\ndelete: member\nmember: ${personDn('bob')}\n-\nadd: member\nmember: ${personDn('robert')}\n`,
  );
  // Carol leaves; staff is removed.
  await slapd.remove(groupDn('staff'));
  await slapd.remove(personDn('carol'));
  const r = await sync(s);
  t.equal(r.code, 0, r.err);
  t.match(r.json.people, { updated: 1, disabled: 1, created: 0 });
  t.match(r.json.groups, { removed: 1 });
  const robert = await account(s, 'robert@example.org');
  t.equal(robert.id, before.id, 'a rename is an update, not a new account');
  t.match(robert, { username: 'robert', name: 'Robert Builder' });
  t.equal(await account(s, 'bob@example.org'), undefined);
  t.ok((await account(s, 'carol@example.org')).disabled, 'a person gone is disabled, not deleted');
  t.equal((await s.action('user_account', 'signin', { email: 'carol@example.org', password: 'carol-directory-pw' })).status, 401);
  t.notOk(await s.db('usergroup').where({ name: 'staff' }).first(), 'a group gone is removed');
  t.same(await groupsOf(s, 'robert@example.org'), ['Home group of Bob Builder', 'engineers', 'users'].sort(), 'the membership follows the rename');

  // Carol comes back (a new entry: a new entryUUID) — the old account stays disabled; the new entry's mail is taken.
  await slapd.add(personLdif('carol', { cn: 'Carol Danvers', password: 'carol-directory-pw' }));
  const back = await sync(s);
  t.match(back.json.people, { created: 0, skipped: 1 });
  t.match(back.json.skipped[0].reason, /with this mail exists already/);

  // A disabled account of a gone person may be deleted here; one still in the directory may not.
  const carol = await account(s, 'carol@example.org');
  const del = await s.call('DELETE', `/api/user_account/${carol.reference_id}`, { token: s.adminToken });
  t.equal(del.status, 204, del.text);
  const alice = await account(s, 'alice@example.org');
  const refused = await s.call('DELETE', `/api/user_account/${alice.reference_id}`, { token: s.adminToken });
  t.equal(refused.status, 403);
  t.match(refused.text, /directory source corp/);
});

t.test('a directory that is down: the sync fails and disables no one; sign-in fails clearly, with no lockout', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd)).code, 0);
  await sync(s);
  await slapd.stop();
  const r = await sync(s);
  t.equal(r.code, 5, 'unavailable');
  t.match(r.err, /cannot be used now/);
  t.equal(
    await s
      .db('user_account')
      .where({ disabled: true })
      .count({ n: '*' })
      .first()
      .then((x) => Number(x!.n)),
    0,
    'nobody disabled',
  );
  const shown = await cli(s.dataDir, ['--json', 'source', 'show', 'corp']);
  t.equal(shown.json.last_status, 'failed');

  for (let i = 0; i < 12; i++) {
    const down = await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' });
    t.equal(down.status, 503, 'said as unavailable, not as a wrong password');
    t.match(down.text, /directory cannot be reached/);
  }
  await slapd.start();
  t.equal((await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' })).status, 200, 'no lockout came of it');

  // An empty answer where people were: a wrong base or filter, not a mass departure.
  await slapd.remove(groupDn('staff'));
  await slapd.remove(groupDn('engineers'));
  for (const u of ['alice', 'bob', 'carol']) await slapd.remove(personDn(u));
  const empty = await sync(s);
  t.not(empty.code, 0);
  t.match(empty.err, /would disable 3 of 3 people and remove 2 of 2 groups: nothing was changed/);
  t.equal(
    await s
      .db('user_account')
      .where({ disabled: true })
      .count({ n: '*' })
      .first()
      .then((x) => Number(x!.n)),
    0,
  );
});

t.test('accounts a source manages are read-only elsewhere', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd)).code, 0);
  await sync(s);
  const alice = await account(s, 'alice@example.org');
  const username = await cli(s.dataDir, ['user', 'set-username', 'alice@example.org', 'queen']);
  t.not(username.code, 0);
  t.match(username.err, /directory source corp/);
  const password = await cli(s.dataDir, ['user', 'set-password', 'alice@example.org', '--password-env', 'PW'], { env: { PW: 'a brand new password here' } });
  t.not(password.code, 0);
  t.match(password.err, /directory source corp/);
  const patch = await s.call('PATCH', `/api/user_account/${alice.reference_id}`, {
    token: s.adminToken,
    body: { data: { type: 'user_account', id: alice.reference_id, attributes: { name: 'Queen' } }, meta: {} },
  });
  t.equal(patch.status, 403);
  // Her own session cannot change her password or email either.
  const session = await s.signin('alice@example.org', 'alice-directory-pw');
  const change = await s.action(
    'user_account',
    'change_password',
    { currentPassword: 'alice-directory-pw', password: 'another long password', passwordConfirm: 'another long password' },
    session,
  );
  t.not(change.status, 200);
  t.equal((await account(s, 'alice@example.org')).name, 'Alice Liddell');

  // Nor can an import, --overwrite or not: not her password, not the directory's groups (found by an outside review).
  const csv = path.join(tempDir(t), 'people.csv');
  const hash = '$2b$10$gF7EzPKsZ1qoSJivP6iRaOMPjyHXB/d1riiEq7gCK3HhYAsy/Onra';
  fs.writeFileSync(
    csv,
    `email,name,username,groups,password_hash\nalice@example.org,Owned Alice,alice,engineers,${hash}\nnew@example.org,New,newbie,engineers,${hash}\n`,
  );
  const imported = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', csv, '--overwrite']);
  t.equal(imported.code, 0, imported.err);
  t.match(
    imported.json.people.find((p: { email: string }) => p.email === 'alice@example.org'),
    { outcome: 'skipped', reason: /directory source corp/ },
  );
  t.match(
    imported.json.groups.find((g: { name: string }) => g.name === 'engineers'),
    { outcome: 'skipped', reason: /directory source corp/ },
  );
  const after = await account(s, 'alice@example.org');
  t.equal(after.password, '', 'no password planted');
  t.equal(after.name, 'Alice Liddell');
  t.notOk((await groupsOf(s, 'new@example.org')).includes('engineers'), "nobody put into the directory's group");
});

t.test('--keep-passwords: a hash after a successful bind, which outlives the source', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd, ['--keep-passwords'])).code, 0);
  await sync(s);
  t.equal((await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' })).status, 200);
  await s.core.settle();
  t.match((await account(s, 'alice@example.org')).password, /^\$2b\$04\$/, "Gatehouse's own hash is kept");
  await slapd.stop();
  const removed = await cli(s.dataDir, ['source', 'remove', 'corp']);
  t.equal(removed.code, 0, removed.err);
  t.match(removed.out, /3 people and 2 groups stay/);
  t.equal(
    (await s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' })).status,
    200,
    'the directory retired, she still signs in',
  );
  t.equal((await s.action('user_account', 'signin', { email: 'bob@example.org', password: 'bob-directory-pw' })).status, 401, 'bob never signed in: no hash');
});

t.test('TLS is verified: LDAPS with the directory CA, a certificate for another name refused, plain LDAP only on loopback', async (t) => {
  const good = await startSlapd(t, { tls: { subjectAltName: 'IP:127.0.0.1' } });
  const s = await withAdmin(t);
  const untrusted = await addSource(s, good, [], good.ldapsUrl!);
  t.not(untrusted.code, 0, 'a certificate no trusted authority signed is refused');
  const ok = await addSource(s, good, ['--ca-file', good.caFile!], good.ldapsUrl!);
  t.equal(ok.code, 0, ok.err);
  await cli(s.dataDir, ['source', 'remove', 'corp']);
  const startTls = await addSource(s, good, ['--ca-file', good.caFile!, '--start-tls']);
  t.equal(startTls.code, 0, startTls.err);

  const other = await startSlapd(t, { tls: { subjectAltName: 'DNS:directory.example.net' } });
  const s2 = await withAdmin(t);
  const mismatch = await addSource(s2, other, ['--ca-file', other.caFile!], other.ldapsUrl!);
  t.not(mismatch.code, 0, 'a certificate for another name is refused');
  const clear = await addSource(s2, other, [], 'ldap://192.0.2.1:389');
  t.not(clear.code, 0);
  t.match(clear.err, /in clear: use ldaps:\/\/, or ldap:\/\/ with --start-tls/);
  const wrongBind = await cli(
    s2.dataDir,
    ['source', 'add', 'ldap', '--name', 'x', '--url', other.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'P', '--base-dn', SUFFIX],
    {
      env: { P: 'not the password' },
    },
  );
  t.not(wrongBind.code, 0);
  t.match(wrongBind.err, /bind DN or password was refused/);
  for (const [flag, value] of [
    ['--user-filter', 'objectClass=person'],
    ['--user-filter', '(a=b))(c=d'],
    ['--every', '10s'],
    ['--id-attribute', 'cn'],
    ['--name', 'Bad Name'],
  ]) {
    const r = await addSource(s2, other, [flag, value]);
    t.not(r.code, 0, `${flag} ${value} is refused`);
  }
});

t.test('an update refused here (a mail or group name taken locally) keeps the person and the group', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd)).code, 0);
  await sync(s);
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'local@example.org', '--password-env', 'PW'], { env: { PW: 'a local password here' } })).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'create', 'local-team'])).code, 0);
  await slapd.modify(`dn: ${personDn('alice')}\nchangetype: modify\nreplace: mail\nmail: local@example.org\n`);
  await slapd.modify(`dn: ${groupDn('engineers')}\nchangetype: modrdn\nnewrdn: cn=local-team\ndeleteoldrdn: 1\n`);
  await slapd.modify(
    `dn: ${groupDn('staff')}\nchangetype: modify\ndelete: member\nmember: ${groupDn('engineers')}\n-\nadd: member\nmember: ${groupDn('local-team')}\n`,
  );
  const r = await sync(s);
  t.equal(r.code, 0, r.err);
  t.match(r.json.people, { skipped: 1, disabled: 0 });
  t.match(r.json.groups, { skipped: 1, removed: 0 });
  const alice = await account(s, 'alice@example.org');
  t.notOk(alice.disabled, 'a person still in the directory is never disabled for a refused update');
  t.ok(await s.db('usergroup').where({ name: 'engineers' }).first(), 'a group still in the directory is never removed for a refused rename');
  t.same(await groupsOf(s, 'alice@example.org'), ['Home group of Alice Liddell', 'engineers', 'staff', 'users'].sort(), 'memberships kept');

  // A newcomer entry (earlier in the directory's order, say) with a synced person's mail: the
  // newcomer is the one left out, and nobody is disabled (found by an outside review).
  await slapd.add(personLdif('aaa-impostor', { mail: 'bob@example.org' }));
  const dup = await sync(s);
  t.equal(dup.code, 0, dup.err);
  t.match(dup.json.people, { disabled: 0, created: 0 });
  t.ok(
    dup.json.skipped.some((k: { dn: string }) => k.dn.includes('aaa-impostor')),
    'the newcomer is left out',
  );
  t.notOk((await account(s, 'bob@example.org')).disabled, 'bob keeps his account, enabled');
  t.equal(dup.json.people.skipped, dup.json.skipped.filter((k: { dn: string }) => k.dn.includes('ou=people')).length, 'the count says as many as the list');
});
