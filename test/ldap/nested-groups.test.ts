// Groups inside groups in the LDAP directory, through clients nobody here wrote: OpenLDAP's
// ldapsearch and ldapcompare, Python's ldap3 and Apache's mod_authnz_ldap. A person's memberOf
// holds every group at any depth, a group's member its direct members (people and groups), the
// in-chain rule (1.2.840.113556.1.4.1941) answers as Active Directory's, and a nesting change
// shows at the next search. docs/ldap.md's nested-groups lines run here as written.
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli';
import { freePort } from '../helpers/browser';
import { startApache } from '../helpers/proxies';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, ldif, person } from '../helpers/ldap';

const IN_CHAIN = '1.2.840.113556.1.4.1941';
const group = (name: string) => `cn=${name},ou=groups,${BASE}`;
const DOC = path.join(__dirname, '..', '..', 'docs', 'ldap.md');

/** staff ⊃ devs ⊃ ops: ann in ops, bo in devs, cy in no group of the three, bot reads. */
async function directory(t: Test) {
  const d = await ldapServer(t);
  const { s, make } = d;
  for (const e of ['ann@example.com', 'bo@example.com', 'cy@example.com', 'bot@example.com']) await make(e);
  for (const g of ['ldap-readers', 'staff', 'devs', 'ops']) await cli(s.dataDir, ['group', 'create', g]);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  await cli(s.dataDir, ['group', 'add', 'ops', 'ann@example.com']);
  await cli(s.dataDir, ['group', 'add', 'devs', 'bo@example.com']);
  for (const [parent, child] of [
    ['staff', 'devs'],
    ['devs', 'ops'],
  ]) {
    const r = await cli(s.dataDir, ['group', 'add-group', parent, child]);
    t.equal(r.code, 0, r.err);
  }
  const as = (u: string) => ['-x', '-H', d.url, '-D', person(u), '-w', PASSWORD];
  const search = async (who: string, base: string, filter: string, ...attributes: string[]) => {
    const r = await ldapTool('ldapsearch', [...as(who), '-b', base, filter, ...attributes]);
    t.equal(r.code, 0, `${filter}: ${r.err}`);
    return ldif(r.out);
  };
  const dns = async (who: string, base: string, filter: string, ...attributes: string[]) =>
    [...(await search(who, base, filter, ...(attributes.length ? attributes : ['1.1']))).keys()].sort();
  return { ...d, as, search, dns };
}

t.test('memberOf at any depth, member direct, the in-chain rule in memberOf and member filters', async (t) => {
  const { s, search, dns } = await directory(t);

  const ann = (await search('bot', `ou=people,${BASE}`, '(uid=ann)', 'memberOf')).get(person('ann'));
  t.same(ann?.get('memberOf')?.sort(), ['devs', 'ops', 'staff', 'users'].map(group), "ann's memberOf: ops, and devs and staff above it");
  const bo = (await search('bot', `ou=people,${BASE}`, '(uid=bo)', 'memberOf')).get(person('bo'));
  t.same(bo?.get('memberOf')?.sort(), ['devs', 'staff', 'users'].map(group), 'bo: devs and staff, not ops below');

  const groups = await search('bot', `ou=groups,${BASE}`, '(objectClass=groupOfNames)', 'member', 'uniqueMember', 'memberOf');
  t.same(groups.get(group('staff'))?.get('member'), [group('devs')], "staff's member: the group inside it, no one through it");
  t.same(groups.get(group('staff'))?.get('uniqueMember'), [group('devs')], 'uniqueMember alike');
  t.same(groups.get(group('devs'))?.get('member'), [person('bo'), group('ops')], "devs': its person, then its group");
  t.same(groups.get(group('ops'))?.get('member'), [person('ann')]);
  t.notOk(groups.get(group('ops'))?.get('memberOf'), 'a group entry has no memberOf');

  // memberOf: equality and the in-chain rule agree (memberOf already holds every depth), people only.
  for (const filter of [
    `(memberOf=${group('staff')})`,
    `(memberOf:${IN_CHAIN}:=${group('staff')})`,
    `(memberOf:${IN_CHAIN}:=CN=Staff,OU=Groups,DC=example,DC=com)`,
  ]) {
    t.same(await dns('bot', BASE, filter), [person('ann'), person('bo')], `${filter}: everyone in staff at any depth`);
  }
  t.same(await dns('bot', BASE, `(memberOf:${IN_CHAIN}:=${group('ops')})`), [person('ann')]);
  t.same(await dns('bot', BASE, `(&(objectClass=person)(memberOf:${IN_CHAIN}:=${group('devs')})(!(uid=bo)))`), [person('ann')], 'inside an AND');

  // member: plain equality stays direct; the in-chain rule follows the chain, for a person or a group.
  const groupsBase = `ou=groups,${BASE}`;
  t.same(await dns('bot', groupsBase, `(member=${person('ann')})`), [group('ops'), group('users')], 'member=ann: her direct groups');
  t.same(await dns('bot', groupsBase, `(member=${group('ops')})`), [group('devs')], 'member=ops: the group it is directly inside');
  const annGroups = [group('devs'), group('ops'), group('staff'), group('users')];
  t.same(await dns('bot', groupsBase, `(member:${IN_CHAIN}:=${person('ann')})`), annGroups, 'every group ann is in');
  t.same(await dns('bot', groupsBase, `(member:${IN_CHAIN}:=${person('ann')})`, 'member'), annGroups, 'the same with member lists returned');
  t.same(
    await dns('bot', BASE, `(&(objectClass=groupOfUniqueNames)(uniqueMember:${IN_CHAIN}:=${person('ann')}))`, 'cn'),
    annGroups,
    'uniqueMember, from the base',
  );
  t.same(await dns('bot', groupsBase, `(member:${IN_CHAIN}:=${group('ops')})`), [group('devs'), group('staff')], 'every group ops is inside');
  t.same(await dns('bot', groupsBase, `(member:${IN_CHAIN}:=${group('staff')})`), [], 'staff is inside nothing');
  t.same(
    await dns('bot', groupsBase, `(&(objectClass=groupOfNames)(!(member:${IN_CHAIN}:=${person('ann')})))`),
    [group('administrators'), group('ldap-readers')],
    'under a NOT',
  );
  t.same(
    await dns('bot', groupsBase, `(|(member:${IN_CHAIN}:=${person('bo')})(cn=ldap-readers)(member:${IN_CHAIN}:=${group('nobody')}))`),
    [group('devs'), group('ldap-readers'), group('staff'), group('users')],
    'under an OR, beside an unknown group',
  );
  t.same(await dns('bot', group('staff'), `(member:${IN_CHAIN}:=${person('ann')})`), [group('staff')], 'a base search of the group');
  t.same(await dns('bot', group('staff'), `(member:${IN_CHAIN}:=${person('cy')})`), [], 'cy is not in staff');
  t.same(await dns('bot', BASE, `(member:${IN_CHAIN}:=${person('ann')})`), annGroups, 'people entries have no member: groups only');

  // Another rule, or the rule on another attribute: as every extensible match before, nothing.
  t.same(await dns('bot', BASE, `(member:1.2.3.4:=${person('ann')})`), [], 'an unknown rule matches nothing');
  t.same(await dns('bot', BASE, `(uid:${IN_CHAIN}:=ann)`), [], 'the rule on uid matches nothing');

  // Someone who may not search: their own entry only, whatever the filter.
  t.same(await dns('ann', BASE, `(memberOf:${IN_CHAIN}:=${group('staff')})`), [person('ann')], 'ann sees herself');
  t.same(await dns('ann', BASE, `(member:${IN_CHAIN}:=${person('ann')})`), [], 'and no group');

  // A disabled person is inside nothing the directory shows.
  await cli(s.dataDir, ['user', 'disable', 'bo@example.com']);
  t.same(await dns('bot', groupsBase, `(member:${IN_CHAIN}:=${person('bo')})`), []);
  t.same(await dns('bot', BASE, `(memberOf:${IN_CHAIN}:=${group('devs')})`), [person('ann')]);
});

t.test('a nesting change shows at the next search', async (t) => {
  const { s, search, dns } = await directory(t);
  const memberOf = async (u: string) => (await search('bot', person(u), '(objectClass=*)', 'memberOf')).get(person(u))?.get('memberOf')?.sort();

  const removed = await cli(s.dataDir, ['group', 'remove-group', 'devs', 'ops']);
  t.equal(removed.code, 0, removed.err);
  t.same(await memberOf('ann'), [group('ops'), group('users')], 'ops out of devs: ann is in ops alone');
  t.same(await dns('bot', BASE, `(memberOf:${IN_CHAIN}:=${group('staff')})`), [person('bo')]);
  t.same(await dns('bot', `ou=groups,${BASE}`, `(member:${IN_CHAIN}:=${group('ops')})`), []);
  t.notOk((await search('bot', group('devs'), '(objectClass=*)', 'member')).get(group('devs'))?.get('member')?.includes(group('ops')));

  const added = await cli(s.dataDir, ['group', 'add-group', 'staff', 'ops']);
  t.equal(added.code, 0, added.err);
  t.same(await memberOf('ann'), [group('ops'), group('staff'), group('users')], 'ops into staff: ann is in staff again, not in devs');
  t.same(await dns('bot', `ou=groups,${BASE}`, `(member=${group('ops')})`), [group('staff')]);

  // Deleting the middle group takes its chain with it.
  await cli(s.dataDir, ['group', 'add-group', 'devs', 'ops']);
  await cli(s.dataDir, ['group', 'remove-group', 'staff', 'ops']);
  t.same(await memberOf('ann'), ['devs', 'ops', 'staff', 'users'].map(group));
  const deleted = await cli(s.dataDir, ['group', 'delete', 'devs']);
  t.equal(deleted.code, 0, deleted.err);
  t.same(await memberOf('ann'), [group('ops'), group('users')], 'devs deleted: ann is no longer in staff');
});

t.test('compare stays direct; Python ldap3 asks with the in-chain rule', async (t) => {
  const { url, as, s } = await directory(t);
  t.equal((await ldapTool('ldapcompare', [...as('bot'), group('devs'), `member:${group('ops')}`])).code, 6, 'compare: ops is a member of devs');
  t.equal((await ldapTool('ldapcompare', [...as('bot'), group('staff'), `member:${person('ann')}`])).code, 5, 'ann is not a direct member of staff');
  t.equal((await ldapTool('ldapcompare', [...as('bot'), group('ops'), 'objectClass:groupOfNames'])).code, 6, "a member's objectClass, as Apache asks");

  const bot = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'bot@example.com', '--name', 'script']);
  const script = `
import json, sys, ldap3
conn = ldap3.Connection(ldap3.Server(sys.argv[1]), user=sys.argv[2], password=sys.argv[3], auto_bind=True)
conn.search('ou=groups,${BASE}', '(member:${IN_CHAIN}:=${person('ann')})', attributes=['cn'])
groups = sorted(str(e.cn) for e in conn.entries)
conn.search('${BASE}', '(&(objectClass=inetOrgPerson)(memberOf:${IN_CHAIN}:=${group('staff')}))', attributes=['uid', 'memberOf'])
people = {str(e.uid): sorted(e.memberOf.values) for e in conn.entries}
print(json.dumps({'groups': groups, 'people': people}))
`;
  const out = await new Promise<string>((resolve, reject) =>
    execFile('/usr/bin/python3', ['-c', script, url, person('bot'), bot.json.secret], { timeout: 20_000 }, (err, so, se) =>
      err ? reject(new Error(se)) : resolve(so),
    ),
  );
  const r = JSON.parse(out);
  t.same(r.groups, ['devs', 'ops', 'staff', 'users'], 'ldap3: every group ann is in');
  t.same(r.people, { ann: ['devs', 'ops', 'staff', 'users'].map(group), bo: ['devs', 'staff', 'users'].map(group) });
});

/** The shell words of a line: single- and double-quoted parts kept together, "$BOT_PASSWORD" as given. */
const words = (line: string, env: Record<string, string>) =>
  [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? (m[2] ?? m[3]).replace(/\$([A-Z_]+)/g, (_, v: string) => env[v] ?? ''));

t.test("docs/ldap.md's nested-groups lines, as written", async (t) => {
  const { s, port, make } = await ldapServer(t);
  for (const e of ['ann@example.com', 'bo@example.com', 'bot@example.com']) await make(e);
  for (const g of ['ldap-readers', 'media', 'family']) await cli(s.dataDir, ['group', 'create', g]);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  await cli(s.dataDir, ['group', 'add', 'family', 'ann@example.com']);
  await cli(s.dataDir, ['group', 'add', 'media', 'bo@example.com']);
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'bot@example.com', '--name', 'docs']);
  const env = { BOT_PASSWORD: String(app.json.secret) };

  const block = /<!-- ldap-nested:[^\n]*-->\n```sh\n([\s\S]*?)\n```/.exec(fs.readFileSync(DOC, 'utf8'))![1].split('\n');
  let ran = 0;
  for (let i = 0; i < block.length; i++) {
    if (block[i].startsWith('#')) continue;
    const argv = words(block[i].replaceAll('3890', String(port)), env);
    const said: string[] = [];
    for (let j = i + 1; j < block.length && block[j].startsWith('#'); j++) said.push(block[j].replace(/^#\s+/, ''));
    if (argv[0] === 'gatehouse') {
      const r = await cli(s.dataDir, argv.slice(1));
      t.equal(r.code, 0, `${block[i]}: ${r.err}`);
    } else {
      t.equal(argv[0], 'ldapsearch');
      const r = await ldapTool(argv[0], argv.slice(1));
      t.equal(r.code, 0, `${block[i]}: ${r.err}`);
      const lines = r.out.replace(/\n /g, '').split('\n');
      for (const line of said) t.ok(lines.includes(line), `${argv.find((w) => w.startsWith('(')) ?? argv[argv.indexOf('-b') + 1]} answers ${line}`);
      t.same(lines.filter((l) => l.startsWith('dn: ')).sort(), said.filter((l) => l.startsWith('dn: ')).sort(), 'every entry it answers is in the doc');
    }
    ran++;
  }
  t.equal(ran, 4, 'the add-group line and three searches');
});

t.test("Apache's Require ldap-group admits a member of a group inside the required one (docs/ldap.md's block)", async (t) => {
  const { s, port, make } = await ldapServer(t);
  for (const e of ['bot@example.com', 'ann@example.com', 'bo@example.com', 'cy@example.com']) await make(e);
  for (const g of ['ldap-readers', 'media', 'family', 'kids']) await cli(s.dataDir, ['group', 'create', g]);
  await cli(s.dataDir, ['group', 'add', 'ldap-readers', 'bot@example.com']);
  await cli(s.dataDir, ['group', 'add', 'family', 'ann@example.com']);
  await cli(s.dataDir, ['group', 'add', 'kids', 'bo@example.com']);
  await cli(s.dataDir, ['group', 'add-group', 'media', 'family']);
  await cli(s.dataDir, ['group', 'add-group', 'family', 'kids']);
  const app = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'bot@example.com', '--name', 'apache']);

  const m = /<!-- apache:[^\n]*-->\n```apache\n([\s\S]*?)\n```/.exec(fs.readFileSync(DOC, 'utf8'));
  t.ok(m, 'docs/ldap.md has the Apache block');
  t.match(m![1], /Require ldap-group cn=media,ou=groups,dc=example,dc=com/, 'it requires media, the outer group');
  // The block as written, with this test's port and the bot's app password; Apache's caches held
  // to one second so a nesting change is seen by the next request after it.
  const block = m![1]
    .replace('127.0.0.1:3389', `127.0.0.1:${port}`)
    .replace(`"the bot's app password"`, `"${app.json.secret}"`)
    .replace(/^LDAPCacheTTL \d+$/m, 'LDAPCacheTTL 1\nLDAPOpCacheTTL 1');
  const web = await freePort();
  const dir = await startApache(t, web, ['ldap', 'authnz_ldap'], () => block);
  fs.mkdirSync(path.join(dir, 'www', 'media'), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'www', 'media', 'index.html'), 'the media folder\n', { mode: 0o644 });
  const get = async (user: string) =>
    (await fetch(`http://127.0.0.1:${web}/media/index.html`, { headers: { authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}` } }))
      .status;

  t.equal(await get('ann'), 200, 'ann, in family inside media, gets in');
  t.equal(await get('bo'), 200, 'bo, in kids inside family inside media, gets in');
  t.equal(await get('cy'), 401, 'cy, in neither, does not');

  await cli(s.dataDir, ['group', 'remove-group', 'media', 'family']);
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(await get('ann'), 401, 'family out of media: ann is out');
  t.equal(await get('bo'), 401, 'and bo');
});
