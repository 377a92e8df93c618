// The LDAP directory through clients nobody here wrote: OpenLDAP's ldapwhoami, ldapsearch,
// ldapcompare and ldapmodify, and Python's ldap3. Binds (password, wrong password, unknown,
// disabled), the root DSE, Gitea's, Jellyfin's and Nextcloud's filters, paged results, compare,
// who may search, writes refused.
import t from 'tap';
import { execFile } from 'node:child_process';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, ldif, person } from '../helpers/ldap';

t.test('binds, searches and the filters of real apps', async (t) => {
  const { s, url, make } = await ldapServer(t);
  for (const e of ['ann@example.com', 'bot@example.com', 'cy@example.com']) await make(e);
  await cli(s.dataDir, ['group', 'create', 'media']);
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'media', 'ann@example.com']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  const as = (u: string, pw = PASSWORD) => ['-x', '-H', url, '-D', person(u), '-w', pw];

  const who = await ldapTool('ldapwhoami', as('ann'));
  t.equal(who.code, 0, who.err);
  t.equal(who.out.trim(), `dn:${person('ann')}`, 'ldapwhoami: the bound DN');
  t.equal((await ldapTool('ldapwhoami', as('ann', 'wrong password here'))).code, 49, 'a wrong password: invalidCredentials (49)');
  t.equal((await ldapTool('ldapwhoami', as('nobody'))).code, 49, 'an unknown person: 49 too');

  const dse = await ldapTool('ldapsearch', ['-x', '-H', url, '-b', '', '-s', 'base', '+', '*']);
  t.equal(dse.code, 0, dse.err);
  t.match(dse.out, new RegExp(`namingContexts: ${BASE}`));
  t.match(dse.out, /supportedLDAPVersion: 3/);
  t.match(dse.out, /supportedControl: 1\.2\.840\.113556\.1\.4\.319/);
  t.equal((await ldapTool('ldapsearch', ['-x', '-H', url, '-b', BASE, '(uid=ann)'])).code, 50, 'anonymous: only the root DSE');

  // Gitea's login filter, any case, as the bind account (a member of a reader group).
  const gitea = await ldapTool('ldapsearch', [
    ...as('bot'),
    '-b',
    `ou=people,${BASE}`,
    '(&(objectClass=person)(|(uid=ANN)(mail=ANN)))',
    'uid',
    'mail',
    'cn',
    'memberOf',
  ]);
  t.equal(gitea.code, 0, gitea.err);
  const ann = ldif(gitea.out).get(person('ann'));
  t.ok(ann, 'Gitea finds ann');
  t.same(ann?.get('mail'), ['ann@example.com']);
  t.same(ann?.get('memberOf')?.sort(), [`cn=media,ou=groups,${BASE}`, `cn=users,ou=groups,${BASE}`]);
  const byMail = await ldapTool('ldapsearch', [...as('bot'), '-b', BASE, '(&(objectClass=person)(|(uid=ann@example.com)(mail=ann@example.com)))', 'uid']);
  t.same([...ldif(byMail.out).keys()], [person('ann')], 'by mail too');

  // Jellyfin: members of a group by memberOf.
  const jelly = await ldapTool('ldapsearch', [...as('bot'), '-b', BASE, `(memberOf=cn=media,ou=groups,${BASE})`, 'uid']);
  t.same([...ldif(jelly.out).keys()], [person('ann')], 'Jellyfin: memberOf');
  // Nextcloud: groups by uniqueMember.
  const nc = await ldapTool('ldapsearch', [
    ...as('bot'),
    '-b',
    `ou=groups,${BASE}`,
    `(&(objectClass=groupOfUniqueNames)(uniqueMember=${person('ann')}))`,
    'cn',
  ]);
  t.same([...ldif(nc.out).keys()].sort(), [`cn=media,ou=groups,${BASE}`, `cn=users,ou=groups,${BASE}`], 'Nextcloud: groups by uniqueMember');
  // The narrowed reads answer as a full read would: members asked about elsewhere in the filter, or returned.
  const groupsOf = async (filter: string, ...attributes: string[]) =>
    ldif((await ldapTool('ldapsearch', [...as('bot'), '-b', `ou=groups,${BASE}`, filter, ...attributes])).out);
  t.same([...(await groupsOf(`(&(uniqueMember=${person('ann')})(!(uniqueMember=${person('bot')})))`, 'cn')).keys()], [`cn=media,ou=groups,${BASE}`]);
  t.same([...(await groupsOf(`(|(uniqueMember=${person('ann')})(member=${person('bot')}))`, 'cn')).keys()].sort(), [
    `cn=ldap-readers,ou=groups,${BASE}`,
    `cn=media,ou=groups,${BASE}`,
    `cn=users,ou=groups,${BASE}`,
  ]);
  const users = (await groupsOf(`(&(member=${person('ann')})(cn=USERS))`, 'member')).get(`cn=users,ou=groups,${BASE}`);
  t.same(users?.get('member')?.sort(), ['admin', 'ann', 'bot', 'cy'].map(person).sort(), 'a returned member list is whole');

  // Paged results, two a page: every person once.
  const paged = await ldapTool('ldapsearch', [
    ...as('bot'),
    '-b',
    `ou=people,${BASE}`,
    '-s',
    'one',
    '-E',
    'pr=2/noprompt',
    '(objectClass=inetOrgPerson)',
    'uid',
  ]);
  t.equal(paged.code, 0, paged.err);
  t.same([...ldif(paged.out).keys()].sort(), ['admin', 'ann', 'bot', 'cy'].map(person).sort(), 'paged, page size 2');

  // Someone who may not search sees only their own entry.
  const own = await ldapTool('ldapsearch', [...as('cy'), '-b', BASE, '(objectClass=*)', 'uid']);
  t.same([...ldif(own.out).keys()], [BASE, `ou=people,${BASE}`, person('cy'), `ou=groups,${BASE}`], 'cy sees herself and the branches');

  // Compare, as Apache's Require ldap-group asks: 6 compareTrue, 5 compareFalse (ldapcompare's exit codes).
  const media = `cn=media,ou=groups,${BASE}`;
  t.equal((await ldapTool('ldapcompare', [...as('bot'), media, `member:${person('ann')}`])).code, 6, 'compare: ann is a member of media');
  t.equal((await ldapTool('ldapcompare', [...as('bot'), media, `uniqueMember:${person('cy')}`])).code, 5, 'compare: cy is not');
  t.equal((await ldapTool('ldapcompare', [...as('bot'), person('ann'), 'telephoneNumber:1'])).code, 16, 'an attribute the entry lacks: 16');
  t.equal((await ldapTool('ldapcompare', [...as('cy'), media, `member:${person('ann')}`])).code, 32, 'someone who may not search: no such entry');
  t.equal((await ldapTool('ldapcompare', ['-x', '-H', url, media, `member:${person('ann')}`])).code, 50, 'anonymous: 50');

  // Read-only.
  const modify = await ldapTool('ldapmodify', as('admin'), `dn: ${person('ann')}\nchangetype: modify\nreplace: mail\nmail: evil@example.com\n`);
  t.equal(modify.code, 53, 'a write: unwillingToPerform (53)');
  t.match(modify.err, /read-only/);

  // A change in Gatehouse is there on the next request: a disabled account cannot bind.
  t.equal((await ldapTool('ldapwhoami', as('cy'))).code, 0);
  await cli(s.dataDir, ['user', 'disable', 'cy@example.com']);
  t.equal((await ldapTool('ldapwhoami', as('cy'))).code, 49, 'disabled: refused at once');
  const gone = await ldapTool('ldapsearch', [...as('bot'), '-b', BASE, '(uid=cy)', 'uid']);
  t.equal(ldif(gone.out).size, 0, 'and absent from searches');
  t.equal((await ldapTool('ldapsearch', [...as('bot'), '-b', `uid=nobody,ou=people,${BASE}`, '-s', 'base'])).code, 32, 'an unknown entry: noSuchObject');

  // /metrics counts binds and searches by outcome.
  const metrics = (await s.call('GET', '/metrics', { token: s.adminToken })).text;
  t.match(metrics, /gatehouse_ldap_binds_total\{outcome="failed"\} 3\n/, 'a wrong password, an unknown person, a disabled account');
  t.match(metrics, /gatehouse_ldap_binds_total\{outcome="ok"\} \d+/);
  t.match(metrics, /gatehouse_ldap_searches_total\{outcome="refused"\} 1\n/, 'the anonymous search');
  t.match(metrics, /gatehouse_ldap_searches_total\{outcome="not_found"\} 1\n/);
  t.match(metrics, /gatehouse_ldap_searches_total\{outcome="ok"\} \d+/);
});

t.test("Python's ldap3 binds with an app password (TOTP account) and searches", async (t) => {
  const { s, url, make } = await ldapServer(t);
  await make('dee@example.com');
  await cli(s.dataDir, ['group', 'create', 'ldap-readers']);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'dee@example.com']);
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'dee@example.com', '--name', 'script']);
  const script = `
import json, sys, ldap3
server = ldap3.Server(sys.argv[1])
conn = ldap3.Connection(server, user=sys.argv[2], password=sys.argv[3])
ok = conn.bind()
conn.search('${BASE}', '(objectClass=inetOrgPerson)', attributes=['uid', 'mail'])
print(json.dumps({'bound': ok, 'uids': sorted(str(e.uid) for e in conn.entries), 'who': conn.extend.standard.who_am_i()}))
`;
  const out = await new Promise<string>((resolve, reject) =>
    execFile('/usr/bin/python3', ['-c', script, url, person('dee'), app.json.secret], { timeout: 20_000 }, (err, so, se) =>
      err ? reject(new Error(se)) : resolve(so),
    ),
  );
  const r = JSON.parse(out);
  t.equal(r.bound, true, 'an app password binds');
  t.same(r.uids, ['admin', 'dee']);
  t.equal(r.who, `dn:${person('dee')}`);
});
