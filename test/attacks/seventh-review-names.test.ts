// Seventh outside review, findings 7 and 8, on every way an account or a group is made or changed.
// 7: a display name holding a right-to-left override and zero-width characters
// (`Admin\u202eNAME\u200b` shows as "AdminEMAN") is refused where a person types it (signup, the
// record API, the shell, an invitation) and arrives cleaned where another system sends it (SCIM,
// an import file, a directory source in a real slapd, an upstream provider's name claim); the
// controls never reach the store. 8: an address a reader cannot tell from another account's
// (`admin@exаmple.com`, a Cyrillic а) is refused on each way in, naming the look-alike only to
// those who may know it; `--allow-lookalike` lets one in on purpose; concurrent look-alike
// signups make one account; and a store from before gets every account's skeleton, look-alikes
// that were already there included.
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { sqliteFileKnex } from '../../src/store/connection';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { countRows, errorCode, PASSWORD, setSignup, tempDir, TEST_STORE, withAdmin, type TestServer } from '../helpers/server';
import { freshDatabase } from '../helpers/pg';
import { startHostileUpstream, upstreamJar } from '../helpers/hostile-upstream';
import { ADMIN_DN, ADMIN_PASSWORD, personDn, startSlapd, SUFFIX } from '../helpers/slapd';
import { MIGRATIONS } from '../../src/store/migrations';
import { emailSkeleton } from '../../src/accounts/lookalikes';

type Json = Record<string, any>;

const SPOOFED = 'Admin\u202eNAME\u200b';
/** The administrator's address with a Cyrillic а. */
const CYRILLIC = 'admin@ex\u0430mple.com';
/** With the digit 1 for the l: ASCII, so a directory's IA5 `mail` attribute can hold it. */
const DIGIT = 'admin@examp1e.com';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const HIDDEN = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

const accountByKey = (s: TestServer, key: string) => s.db('user_account').where({ email_key: key }).first();
const signupAs = (s: TestServer, email: string, name: string) =>
  s.action('user_account', 'signup', { email, name, password: PASSWORD, passwordConfirm: PASSWORD });

async function openSignup(t: Test) {
  const s = await withAdmin(t);
  t.equal((await setSignup(s, s.adminToken, 2097057)).status, 200);
  return s;
}

async function scimClient(s: TestServer) {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  return async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${s.url}/scim/v2${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Json };
  };
}

function csvFile(t: Test, text: string): string {
  const file = path.join(tempDir(t), 'people.csv');
  fs.writeFileSync(file, text);
  return file;
}

/** "Continue with …", through the upstream, and back at Gatehouse's callback. */
function browser(s: TestServer) {
  const jar = upstreamJar(s);
  const signIn = async (provider: string) => {
    const { callback } = await jar.throughUpstream(provider);
    return jar.go(callback!.replace(s.config.publicUrl, s.url));
  };
  return { signIn };
}

t.test('finding 7: a name with a bidi override or a zero-width character is refused where a person types it', async (t) => {
  const s = await openSignup(t);

  // Signup over HTTP.
  const spoofed = await signupAs(s, 'eve@example.com', SPOOFED);
  t.equal(spoofed.status, 400);
  t.equal(errorCode(spoofed), 'invalid_input');
  t.match(spoofed.body[0].Attributes.message, /name must not contain invisible or direction-changing characters \(U\+202E/, 'names the character');
  t.notOk(await accountByKey(s, 'eve@example.com'), 'no account');
  for (const hidden of ['Eve\u200bLyn', 'Eve\u2067Lyn\u2069', 'Ev\u00ade', 'E\u200dve', 'Eve\ufe0f', '\u3164']) {
    t.equal((await signupAs(s, 'eve@example.com', hidden)).status, 400, `${JSON.stringify(hidden)} refused`);
  }
  // Names written with joiners and selectors on purpose stay possible.
  for (const [email, name] of [
    ['persian@example.com', 'می\u200cخواهم'],
    ['coder@example.com', '👩\u200d💻 Dev'],
    ['heart@example.com', '❤\ufe0f Jo'],
  ]) {
    const r = await signupAs(s, email, name);
    t.equal(r.status, 200, `${name}: ${r.text}`);
    t.equal((await accountByKey(s, email)).name, name, 'kept as written');
  }

  // The record API (the account page, the console): the account's own name, a group's name.
  const kim = await signupAs(s, 'kim@example.com', 'Kim');
  const kimToken = await s.signin('kim@example.com');
  const kimId = kim.body.find((i: Json) => i.ResponseType === 'account.created').Attributes.reference_id;
  const renamed = await s.call('PATCH', `/api/user_account/${kimId}`, {
    token: kimToken,
    body: { data: { type: 'user_account', id: kimId, attributes: { name: 'Kim\u202eadmin' } }, meta: {} },
  });
  t.equal(renamed.status, 400);
  t.equal((await accountByKey(s, 'kim@example.com')).name, 'Kim', 'unchanged');
  const group = await s.call('POST', '/api/usergroup', { token: s.adminToken, body: { data: { type: 'usergroup', attributes: { name: 'eng\u200bineers' } } } });
  t.equal(group.status, 400);
  t.equal(
    await s
      .db('usergroup')
      .where({ name: 'eng\u200bineers' })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    0,
  );

  // The shell.
  const created = await cli(s.dataDir, ['user', 'create', '--email', 'zed@example.com', '--name', SPOOFED, '--password-env', 'PW'], {
    env: { PW: PASSWORD },
  });
  t.equal(created.code, 2, 'a usage error');
  t.match(created.err, /U\+202E/);
  t.notOk(await accountByKey(s, 'zed@example.com'));
  const shellGroup = await cli(s.dataDir, ['group', 'create', 'ops\u200bteam']);
  t.equal(shellGroup.code, 2);
  t.match(shellGroup.err, /U\+200B/);

  // An invitation: the person types the name.
  const invited = await cli(s.dataDir, ['--json', 'user', 'invite', 'ivy@example.com', '--print-link']);
  t.equal(invited.code, 0, invited.err);
  const invite = new URL(invited.json.link).searchParams.get('invite')!;
  const accept = (name: string) => s.action('user_account', 'signup', { invite, name, password: PASSWORD, passwordConfirm: PASSWORD });
  t.equal((await accept(SPOOFED)).status, 400);
  t.equal((await accept('Ivy')).status, 200, 'the invitation is still good for a plain name');

  const names: Array<{ name: string }> = await s.db('user_account').select('name');
  t.notOk(
    names.some((r) => r.name.includes('\u202e') || r.name.includes('\u200b')),
    'no override, no zero-width space in any stored name',
  );
});

t.test('finding 7: names another system sends arrive without their hidden characters (SCIM, import, upstream)', async (t) => {
  const s = await openSignup(t);

  // SCIM: a User and a Group, made and changed.
  const scim = await scimClient(s);
  const user = await scim('POST', '/Users', {
    schemas: [USER],
    userName: 'dana',
    emails: [{ value: 'dana@corp.example', primary: true }],
    displayName: SPOOFED,
  });
  t.equal(user.status, 201, JSON.stringify(user.body));
  t.equal(user.body.displayName, 'AdminNAME', 'provisioned under the name as it shows');
  const patched = await scim('PATCH', `/Users/${user.body.id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', path: 'displayName', value: 'Dana\u200b Lee\u2066' }],
  });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.equal((await accountByKey(s, 'dana@corp.example')).name, 'Dana Lee');
  const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'eng\u200bineers\u202e' });
  t.equal(group.status, 201, JSON.stringify(group.body));
  t.equal(group.body.displayName, 'engineers');

  // An import file (a name with an override, a group with a zero-width space).
  const file = csvFile(t, `email,name,groups\nann@corp.example,"Ann\u202e Lee\u200b",ops\u200bteam\n`);
  const imported = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file]);
  t.equal(imported.code, 0, imported.err);
  t.equal(imported.json.created, 1, JSON.stringify(imported.json.people));
  t.equal((await accountByKey(s, 'ann@corp.example')).name, 'Ann Lee');
  t.ok(await s.db('usergroup').where({ name: 'opsteam' }).first(), 'the group under its visible name');

  // An upstream provider's name claim, for a new person while signup is open.
  const upstream = await startHostileUpstream(t, 'gatehouse-client');
  const added = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'corp', '--issuer', upstream.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S'],
    {
      env: { S: 'a-secret' },
    },
  );
  t.equal(added.code, 0, added.err);
  upstream.email = 'newcomer@corp.example';
  upstream.name = SPOOFED;
  const landed = await browser(s).signIn('corp');
  t.equal(landed.status, 303, landed.text.slice(0, 300));
  t.equal((await accountByKey(s, 'newcomer@corp.example')).name, 'AdminNAME');

  const names: Array<{ name: string }> = [...(await s.db('user_account').select('name')), ...(await s.db('usergroup').select('name'))];
  t.same(
    names.filter((r) => HIDDEN.test(r.name)),
    [],
    'no hidden character in any stored name',
  );
});

t.test('findings 7 and 8 in a directory source: names cleaned, a look-alike mail skipped naming the account', async (t) => {
  const slapd = await startSlapd(t);
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  await slapd.add(
    [
      `dn: ${personDn('zed')}`,
      'objectClass: inetOrgPerson',
      'uid: zed',
      'cn: Zed',
      'sn: zed',
      `displayName:: ${b64(SPOOFED)}`,
      'mail: zed@example.org',
      '',
      `dn: ${personDn('mal')}`,
      'objectClass: inetOrgPerson',
      'uid: mal',
      'cn: Mal',
      'sn: mal',
      `mail: ${DIGIT}`,
      '',
      `dn:: ${b64(`cn=eng\u200bineers,ou=groups,${SUFFIX}`)}`,
      'objectClass: groupOfNames',
      `cn:: ${b64('eng\u200bineers')}`,
      `member: ${personDn('zed')}`,
      '',
      '',
    ].join('\n'),
  );
  const s = await withAdmin(t);
  const source = await cli(
    s.dataDir,
    ['--json', 'source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(source.code, 0, source.err);
  const sync = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(sync.code, 0, sync.err);
  t.match(sync.json.people, { created: 1, skipped: 1 });
  t.equal((await accountByKey(s, 'zed@example.org')).name, 'AdminNAME', 'the directory’s name, cleaned');
  t.ok(await s.db('usergroup').where({ name: 'engineers' }).first(), 'the group under its visible name');
  const skipped = sync.json.skipped.find((x: { dn: string }) => x.dn.startsWith('uid=mal'));
  t.match(skipped?.reason, /looks like an existing account's address admin@example\.com/, 'the report names the look-alike');
  t.notOk(await accountByKey(s, DIGIT), 'no look-alike account');

  // A mail changed in the directory to a look-alike: the account keeps the one it had.
  await slapd.modify(`dn: ${personDn('zed')}\nchangetype: modify\nreplace: mail\nmail: ${DIGIT}\n\n`);
  const again = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(again.code, 0, again.err);
  t.ok(
    again.json.skipped.some((x: { dn: string; reason: string }) => x.dn.startsWith('uid=zed') && /admin@example\.com/.test(x.reason)),
    'the change is left out, naming the look-alike',
  );
  t.ok(await accountByKey(s, 'zed@example.org'), 'zed keeps the mail it had');
});

t.test('finding 8: a look-alike of an existing address is refused on every way in', async (t) => {
  const s = await openSignup(t);
  const admin = await accountByKey(s, 'admin@example.com');
  t.equal(admin.email_skeleton, await emailSkeleton('admin@example.com'), 'the skeleton is stored with the account');
  const accounts = async () => countRows(s, 'user_account');
  const before = await accounts();

  // Signup: the answer a taken address gets, naming nobody.
  const taken = await s.signup('admin@example.com');
  t.equal((await s.signup('admin@ex\u200bample.com')).status, 400, 'an invisible character in an address is refused as malformed');
  for (const look of [CYRILLIC, DIGIT, 'admin@exarnple.com']) {
    const r = await s.signup(look);
    t.equal(r.status, 409, `${look}: refused`);
    t.same(r.body, taken.body, `${look}: the same answer as the address itself`);
    t.notMatch(r.text, /admin@example\.com/);
  }
  t.equal(await accounts(), before, 'no account made');

  // Changing one's own address to a look-alike: the same answer.
  t.equal((await s.signup('kim@example.com')).status, 200);
  const kim = await s.signin('kim@example.com');
  const moved = await s.action('user_account', 'change_email', { email: CYRILLIC, password: PASSWORD }, kim);
  t.equal(moved.status, 409);
  t.same(moved.body, taken.body);
  t.equal((await accountByKey(s, 'kim@example.com')).email, 'kim@example.com', 'unchanged');

  // The shell: refused naming the account and the flag; --allow-lookalike makes it on purpose.
  const pw = { env: { PW: PASSWORD } };
  const create = await cli(s.dataDir, ['user', 'create', '--email', CYRILLIC, '--password-env', 'PW'], pw);
  t.equal(create.code, 3);
  t.match(create.err, /looks like an existing account's address admin@example\.com \(--allow-lookalike lets it in\)/);
  const invite = await cli(s.dataDir, ['user', 'invite', DIGIT]);
  t.equal(invite.code, 3, 'no invitation for a look-alike');
  t.match(invite.err, /admin@example\.com/);
  t.equal(await countRows(s, 'invitation'), 0);
  t.equal(await accounts(), before + 1, 'only kim');
  const allowed = await cli(s.dataDir, ['--json', 'user', 'create', '--email', 'admin@exarnple.com', '--allow-lookalike', '--password-env', 'PW'], pw);
  t.equal(allowed.code, 0, allowed.err);
  t.equal((await accountByKey(s, 'admin@exarnple.com')).email_skeleton, admin.email_skeleton, 'made, with the shared skeleton');

  // SCIM: a new User, and a User's address moved to a look-alike.
  const scim = await scimClient(s);
  const lookalike = await scim('POST', '/Users', { schemas: [USER], userName: 'mallory', emails: [{ value: DIGIT, primary: true }] });
  t.equal(lookalike.status, 409);
  t.equal(lookalike.body.scimType, 'uniqueness');
  t.match(lookalike.body.detail, /looks like an existing account's address admin@example\.com/);
  const dana = await scim('POST', '/Users', { schemas: [USER], userName: 'dana', emails: [{ value: 'dana@corp.example', primary: true }] });
  t.equal(dana.status, 201);
  const put = await scim('PUT', `/Users/${dana.body.id}`, { schemas: [USER], userName: 'dana', emails: [{ value: CYRILLIC, primary: true }] });
  t.equal(put.status, 409);
  t.equal((await accountByKey(s, 'dana@corp.example'))?.email, 'dana@corp.example', 'dana keeps her address');

  // An import: skipped naming it, look-alikes inside the file too; --allow-lookalike makes them.
  const file = csvFile(t, `email,name\n${CYRILLIC},Mallory\nzoe@corp.example,Zoe\nzoe@c\u03bfrp.example,Zoe Too\n`);
  const imported = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file]);
  t.equal(imported.code, 0, imported.err);
  const outcome = (email: string) => imported.json.people.find((p: { email: string }) => p.email === email);
  t.match(outcome(CYRILLIC), { outcome: 'skipped', reason: /looks like an existing account's address admin@example\.com/ });
  t.match(outcome('zoe@corp.example'), { outcome: 'created' });
  t.match(outcome('zoe@c\u03bfrp.example'), { outcome: 'skipped', reason: /zoe@corp\.example/ });
  const again = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', '--allow-lookalike', file]);
  t.equal(again.code, 0, again.err);
  t.equal(again.json.created, 2, 'made on purpose');

  // An upstream provider's newcomer: the answer a taken address gets, naming nobody.
  const upstream = await startHostileUpstream(t, 'gatehouse-client');
  t.equal(
    (
      await cli(s.dataDir, ['provider', 'add', '--name', 'corp', '--issuer', upstream.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S'], {
        env: { S: 'a-secret' },
      })
    ).code,
    0,
  );
  upstream.email = DIGIT;
  const counted = await accounts();
  const landed = await browser(s).signIn('corp');
  t.ok(landed.status >= 400 && landed.status < 500, `refused (${landed.status})`);
  t.match(landed.text, /An account with this email address exists here/);
  t.notMatch(landed.text, /admin@example\.com/);
  t.equal(await accounts(), counted, 'no account');
  t.equal(await countRows(s, 'linked_identity'), 0);
});

t.test('finding 8: look-alike signups at once make one account', async (t) => {
  const s = await openSignup(t);
  const looks = ['pat@example.com', 'pat@ex\u0430mple.com', 'pat@examp1e.com', 'pat@exarnple.com', 'p\u0430t@example.com', 'pat@\u0435xample.com'];
  const skeletons = new Set(await Promise.all(looks.map((l) => emailSkeleton(l))));
  t.equal(skeletons.size, 1, 'one skeleton for all of them');
  const replies = await Promise.all(looks.map((l) => s.signup(l)));
  t.same(replies.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409], 'one made, the others refused');
  const [skeleton] = skeletons;
  t.equal(
    await s
      .db('user_account')
      .where({ email_skeleton: skeleton })
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    1,
  );
});

/** A store at the schema before the skeletons, on this pass's dialect: its folder, the shell's --db, a connection to it. */
async function storeBeforeSkeletons(t: Test): Promise<{ dir: string; db: string[]; knex: Knex }> {
  const dir = tempDir(t);
  let knex: Knex;
  let db: string[];
  if (TEST_STORE === 'postgres') {
    const url = await freshDatabase(t);
    knex = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
    db = ['--db', url];
  } else {
    const file = path.join(dir, 'gatehouse.sqlite');
    fs.writeFileSync(file, '', { mode: 0o600 });
    knex = sqliteFileKnex(file, '', 5000);
    db = ['--db', ''];
  }
  t.teardown(() => knex.destroy());
  const before = MIGRATIONS.findIndex(([name]) => name === '20261213000000_email_skeletons');
  await knex.migrate.latest({
    migrationSource: { getMigrations: async () => MIGRATIONS.slice(0, before), getMigrationName: ([name]) => name, getMigration: async ([, m]) => m },
  });
  return { dir, db, knex };
}

t.test('the migration gives every account its skeleton, look-alikes already there included', async (t) => {
  const { dir, db, knex } = await storeBeforeSkeletons(t);
  const now = Date.now();
  // Made before the rule: the administrator's address and a look-alike of it, and someone else.
  const people = ['admin@example.com', CYRILLIC, 'bo@example.com'];
  for (const [i, email] of people.entries()) {
    await knex('user_account').insert({
      reference_id: `00000000-0000-4000-8000-00000000000${i}`,
      email,
      email_key: email,
      username: `u${i}`,
      name: 'N',
      password: '',
      permission: 0,
      created_at: now,
      updated_at: now,
    });
  }
  const migrated = await cli(dir, [...db, '--json', 'migrate']);
  t.equal(migrated.code, 0, `migrates though two accounts share a skeleton: ${migrated.err}`);
  const rows: Array<{ email_key: string; email_skeleton: string }> = await knex('user_account').orderBy('id').select('email_key', 'email_skeleton');
  t.same(
    rows.map((r) => r.email_key),
    people,
    'every account kept',
  );
  for (const r of rows) t.equal(r.email_skeleton, await emailSkeleton(r.email_key), `${r.email_key}: its skeleton`);
  t.equal(rows[0].email_skeleton, rows[1].email_skeleton, 'the look-alikes share one');
  // From now on a third is refused, naming the first.
  const third = await cli(dir, [...db, 'user', 'create', '--email', DIGIT, '--password-env', 'PW'], { env: { PW: PASSWORD } });
  t.equal(third.code, 3);
  t.match(third.err, /admin@example\.com/);
});
