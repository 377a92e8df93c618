// Gatehouse's own LDAP directory (Gatehouse A) as the directory source of a second Gatehouse (B):
// A's directory set up as an app would use it (a bind account in a reader group, with an app
// password); people, their groups and a nested group synced into B; a person signs in to B with
// their password at A (a bind per sign-in: a password changed at A works at B at once); changes
// at A reach B at the next sync (a group removed, a nesting undone, a rename, a person deleted or
// disabled at A disabled at B, and back); more people than one page of the sync's paged search;
// and groups whose names differ only where a DN is spelled loosely.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, tempDir, withAdmin } from '../helpers/server';
import { BASE, ldapServer, person } from '../helpers/ldap';

type B = Awaited<ReturnType<typeof withAdmin>>;
type Events = Array<{ event: string; details?: Record<string, unknown> }>;

/**
 * Gatehouse A with its directory: ann in devs, devs inside staff, bo in staff, cy and dee in ops,
 * and bot, the bind account, in ldap-readers (the group the directory lets search), with an app password.
 */
async function gatehouseA(t: Test) {
  const a = await ldapServer(t, { readers: ['ldap-readers'] });
  const run = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = await cli(a.s.dataDir, args, { env });
    t.equal(r.code, 0, `A: ${args.slice(0, 3).join(' ')}: ${r.err}`);
    return r;
  };
  for (const u of ['ann', 'bo', 'cy', 'dee', 'bot']) t.equal((await a.make(`${u}@example.com`)).code, 0);
  for (const g of ['ldap-readers', 'staff', 'devs', 'ops']) await run(['group', 'create', g]);
  await run(['group', 'add', 'ldap-readers', 'bot@example.com']);
  await run(['group', 'add', 'devs', 'ann@example.com']);
  await run(['group', 'add', 'staff', 'bo@example.com']);
  await run(['group', 'add', 'ops', 'cy@example.com']);
  await run(['group', 'add', 'ops', 'dee@example.com']);
  await run(['group', 'add-group', 'staff', 'devs']);
  const app = (await run(['--json', 'user', 'app-password', 'add', 'bot@example.com', '--name', 'gatehouse-b'])).json;
  t.ok(app.secret, 'the bind account has an app password');
  const reference = async (email: string) => (await a.s.db('user_account').where({ email_key: email }).first()).reference_id as string;
  return { ...a, run, bindPassword: app.secret as string, reference };
}
type A = Awaited<ReturnType<typeof gatehouseA>>;

const addSource = (b: B, a: A, extra: string[] = []) =>
  cli(
    b.dataDir,
    [
      '--json',
      'source',
      'add',
      'ldap',
      '--name',
      'gatehouse-a',
      '--url',
      a.url,
      '--bind-dn',
      person('bot'),
      '--bind-password-env',
      'BINDPW',
      '--base-dn',
      BASE,
      ...extra,
    ],
    { env: { BINDPW: a.bindPassword } },
  );
const sync = (b: B) => cli(b.dataDir, ['--json', 'source', 'sync', 'gatehouse-a']);
const account = (b: B, email: string) => b.db('user_account').where({ email_key: email }).first();
const groupsOf = async (b: B, email: string) => {
  const r = await cli(b.dataDir, ['--json', 'user', 'show', email]);
  return (r.json.groups as Array<{ name: string; direct: boolean; through: string[] }>)
    .filter((g) => !g.name.startsWith('Home group of'))
    .map((g) => `${g.name}${g.direct ? '' : ` (through ${g.through.join(', ')})`}`)
    .sort();
};
const signin = async (b: B, email: string, password: string) => (await b.action('user_account', 'signin', { email, password })).status;
const audit = async (dataDir: string): Promise<Events> => (await cli(dataDir, ['--json', 'audit', '--limit', '500'])).json.events;

t.test('people, their groups and a nested group come from Gatehouse A; they sign in to B with their password at A', async (t) => {
  const a = await gatehouseA(t);
  const b = await withAdmin(t);

  const added = await addSource(b, a);
  t.equal(added.code, 0, added.err);
  t.notOk(added.out.includes(a.bindPassword), 'the app password is never shown');

  const first = await sync(b);
  t.equal(first.code, 0, first.err);
  t.match(first.json.people, { created: 5, skipped: 1 }, `ann, bo, cy, dee and bot; A’s admin skipped: ${JSON.stringify(first.json.skipped)}`);
  t.match(first.json.groups, { created: 4 }, 'ldap-readers, staff, devs, ops');
  t.match(first.json.nestings, { added: 1 }, 'devs inside staff');
  const reasons = Object.fromEntries((first.json.skipped as Array<{ dn: string; reason: string }>).map((s) => [s.dn, s.reason]));
  t.match(reasons, {
    [person('admin')]: /mail (exists|already)/,
    [`cn=administrators,ou=groups,${BASE}`]: /reserved/,
    [`cn=users,ou=groups,${BASE}`]: /reserved/,
  });
  t.equal(first.json.skipped.length, 3, 'A’s administrator (B’s has the mail) and A’s built-in groups, nothing else');

  const ann = await account(b, 'ann@example.com');
  t.match(ann, { username: 'ann', name: 'ann', password: '' }, 'no hash copied');
  t.ok(ann.email_verified, 'the directory vouches for the mail');
  const entry = await b.db('source_entry').where({ account_id: ann.id }).first();
  t.equal(entry.entry_id, await a.reference('ann@example.com'), 'keyed by A’s entryUUID (its reference_id), as A gives it');
  t.equal(entry.dn, person('ann'));
  t.same(await groupsOf(b, 'ann@example.com'), ['devs', 'staff (through devs)', 'users'], 'ann: devs, and staff through it');
  t.same(await groupsOf(b, 'bo@example.com'), ['staff', 'users']);
  t.same(await groupsOf(b, 'cy@example.com'), ['ops', 'users']);
  t.same(await groupsOf(b, 'bot@example.com'), ['ldap-readers', 'users']);
  t.equal((await account(b, 'admin@example.com')).password === '', false, 'B’s own administrator is left alone');

  const again = await sync(b);
  t.equal(again.code, 0, again.err);
  t.match(again.json.people, { created: 0, updated: 0, unchanged: 5 }, 'the same directory again changes nothing');
  t.match(again.json.members, { added: 0, removed: 0 });
  t.match(again.json.nestings, { added: 0, removed: 0 });

  // Sign-in at B: a bind to A as the person, each time.
  t.equal(await signin(b, 'ann@example.com', PASSWORD), 200, 'ann signs in to B with her password at A');
  t.equal(await signin(b, 'ann@example.com', 'not her password at all'), 401);
  t.equal(await signin(b, 'ann@example.com', ''), 401, 'never an anonymous bind');
  const changed = await a.run(['user', 'set-password', 'ann@example.com', '--password-env', 'PW'], { PW: 'her brand new password at A' });
  t.equal(changed.code, 0);
  t.equal(await signin(b, 'ann@example.com', PASSWORD), 401, 'the old password, changed at A, no longer opens B (no sync between)');
  t.equal(await signin(b, 'ann@example.com', 'her brand new password at A'), 200, 'the new one does at once');
  t.equal((await account(b, 'ann@example.com')).password, '', 'still no hash at B');
  // A disabled person at A is out of A's directory: B's sign-in finds no entry to bind as.
  await a.run(['user', 'disable', 'dee@example.com']);
  t.equal(await signin(b, 'dee@example.com', PASSWORD), 401, 'disabled at A: refused at B before any sync');
  await a.run(['user', 'enable', 'dee@example.com']);
  t.equal(await signin(b, 'dee@example.com', PASSWORD), 200);

  await b.core.settle();
  await a.s.core.settle();
  const atB = await audit(b.dataDir);
  t.equal(atB.filter((e) => e.event === 'imported_signin').length, 2, 'first sign-ins audited once each (ann, dee)');
  const atA = await audit(a.s.dataDir);
  const annAtA = await a.reference('ann@example.com');
  const binds = atA.filter((e) => e.event === 'signin_ok' && JSON.stringify(e).includes(annAtA) && JSON.stringify(e).includes('ldap'));
  t.equal(binds.length, 2, 'A saw one bind per successful sign-in at B (method ldap)');

  const shown = await cli(b.dataDir, ['--json', 'source', 'show', 'gatehouse-a']);
  t.match(shown.json, { people: 5, gone: 0, groups: 4, last_status: 'ok', bind_dn: person('bot') });
});

t.test('changes at A reach B at the next sync', async (t) => {
  const a = await gatehouseA(t);
  const b = await withAdmin(t);
  t.equal((await addSource(b, a)).code, 0);
  t.equal((await sync(b)).code, 0);
  const before = { bo: await account(b, 'bo@example.com'), cy: await account(b, 'cy@example.com') };
  const opsAtB = await b.db('usergroup').where({ name: 'ops' }).first();

  // At A: ops deleted, devs taken out of staff, bo renamed robert, cy deleted, dee disabled.
  await a.run(['group', 'delete', 'ops']);
  await a.run(['group', 'remove-group', 'staff', 'devs']);
  await a.run(['user', 'set-username', 'bo@example.com', 'robert']);
  const cyAtA = await a.reference('cy@example.com');
  const deleted = await a.s.call('DELETE', `/api/user_account/${cyAtA}`, { token: a.s.adminToken });
  t.equal(deleted.status, 204, deleted.text);
  await a.run(['user', 'disable', 'dee@example.com']);

  const r = await sync(b);
  t.equal(r.code, 0, r.err);
  t.match(r.json.groups, { removed: 1, created: 0 }, 'ops removed');
  t.match(r.json.nestings, { removed: 1 }, 'devs out of staff');
  t.match(r.json.people, { updated: 1, disabled: 2, created: 0 }, 'bo renamed; cy and dee disabled');
  t.notOk(await b.db('usergroup').where({ name: 'ops' }).first(), 'a group removed at A is removed at B');
  t.notOk(await b.db('usergroup').where({ id: opsAtB.id }).first());
  t.same(await groupsOf(b, 'ann@example.com'), ['devs', 'users'], 'no longer in staff through devs');
  const robert = await account(b, 'bo@example.com');
  t.equal(robert.id, before.bo.id, 'a rename at A is an update at B');
  t.equal(robert.username, 'robert');
  t.same(await groupsOf(b, 'bo@example.com'), ['staff', 'users'], 'and the membership follows the new DN');
  const cy = await account(b, 'cy@example.com');
  t.equal(cy.id, before.cy.id, 'a person deleted at A is not deleted at B');
  t.ok(cy.disabled, 'but disabled');
  t.ok((await account(b, 'dee@example.com')).disabled, 'a person disabled at A (out of its directory) is disabled at B');
  t.equal(await signin(b, 'cy@example.com', PASSWORD), 401);
  t.equal(await signin(b, 'robert@example.com', PASSWORD), 401, 'no such email');
  t.equal(await signin(b, 'bo@example.com', PASSWORD), 200, 'bo (robert at A) signs in as ever');

  // dee back at A: enabled at B.
  await a.run(['user', 'enable', 'dee@example.com']);
  const back = await sync(b);
  t.match(back.json.people, { enabled: 1, disabled: 0 });
  t.notOk((await account(b, 'dee@example.com')).disabled);
  t.equal(await signin(b, 'dee@example.com', PASSWORD), 200);
  const shown = await cli(b.dataDir, ['--json', 'source', 'show', 'gatehouse-a']);
  t.match(shown.json, { people: 4, gone: 1, groups: 3 });
});

t.test('more people than one page of the sync’s paged search', async (t) => {
  const a = await gatehouseA(t);
  const n = 1200;
  const dir = tempDir(t);
  const file = path.join(dir, 'people.csv');
  const rows = ['email,name,username,groups'];
  for (let i = 0; i < n; i++) rows.push(`p${i}@example.com,Person ${i},p${i},${i % 2 === 0 ? 'evens' : 'odds'}`);
  fs.writeFileSync(file, rows.join('\n') + '\n');
  const imported = await a.run(['--json', 'import', '--from', 'csv', file]);
  t.equal(imported.code, 0);
  const b = await withAdmin(t);
  t.equal((await addSource(b, a)).code, 0);
  const r = await sync(b);
  t.equal(r.code, 0, r.err);
  t.match(r.json.people, { created: n + 5, skipped: 1 }, 'every person once, over several pages (A’s admin skipped, as ever)');
  t.match(r.json.members, { added: n + 5 });
  const members = async (name: string) => {
    const g = await b.db('usergroup').where({ name }).first();
    return Number((await b.db('membership').where({ usergroup_id: g.id }).count({ n: '*' }).first())!.n);
  };
  t.equal(await members('evens'), n / 2);
  t.equal(await members('odds'), n / 2);
  const again = await sync(b);
  t.match(again.json.people, { unchanged: n + 5, created: 0, disabled: 0 });
});

t.test('the bind account losing its right to search at A disables nobody at B', async (t) => {
  const a = await gatehouseA(t);
  const b = await withAdmin(t);
  t.equal((await addSource(b, a)).code, 0);
  t.match((await sync(b)).json.people, { created: 5 });
  // At A, bot leaves ldap-readers: its searches now see only its own entry (and the branches).
  await a.run(['group', 'remove', 'ldap-readers', 'bot@example.com']);
  const r = await sync(b);
  const disabled = await b.db('user_account').where({ disabled: true }).pluck('email');
  t.same(disabled, [], `a directory that now answers only the bind account itself is not a mass departure: sync ${r.code} ${r.out}${r.err}`);
  t.not(r.code, 0, 'the sync fails, as for an empty answer');
});

t.test('groups whose names differ only by the spaces around a comma stay apart', async (t) => {
  const a = await gatehouseA(t);
  await a.run(['group', 'create', 'R&D, Europe']);
  await a.run(['group', 'create', 'R&D,Europe']);
  await a.run(['group', 'add', 'R&D, Europe', 'ann@example.com']);
  await a.run(['group', 'add', 'R&D,Europe', 'bo@example.com']);
  const b = await withAdmin(t);
  t.equal((await addSource(b, a)).code, 0);
  const r = await sync(b);
  t.equal(r.code, 0, r.err);
  t.match(r.json.groups, { created: 6 });
  t.same(await groupsOf(b, 'ann@example.com'), ['R&D, Europe', 'devs', 'staff (through devs)', 'users'], 'ann in “R&D, Europe” only');
  t.same(await groupsOf(b, 'bo@example.com'), ['R&D,Europe', 'staff', 'users'], 'bo in “R&D,Europe” only');
});
