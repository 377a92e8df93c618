// The outside review's second look at the seventh review's fixes, findings 2 to 8.
// 2: a SAML service provider's ACS and logout URLs (the browser is sent there with a Response)
// take no user or password in any spelling (`user:pw@`, `user@`, `:@`, `https:\\`, `https:`,
// `https:///`) and nothing unseen (a tab, a newline) from the shell, metadata, the console or a
// configuration file; one stored before is shown and exported as `***`. 3: `saml sp add
// --metadata` judges anything that looks like a URL as a URL, and its refusals repeat neither a
// password nor a query value. 4: a look-alike address written in punycode (`xn--`) or with a
// Cyrillic palochka for the `l` is refused, and a store from before gets the new skeletons. 5: a
// name that shows nothing (Braille blanks) or holds a lone surrogate is refused. 6: a SCIM member
// whose keys differ only by case, or that has keys a member cannot have, is refused; ids compare
// without case in PATCH filters. 7: Authelia users named `constructor` and `__proto__` are read
// as users. 8: `gatehouse … | head` ends quietly, exit 0, when the reader goes away.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { sqliteFileKnex } from '../../src/store/connection';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { countRows, dbForDir, errorCode, PASSWORD, setSignup, tempDir, TEST_STORE, type TestServer, withAdmin } from '../helpers/server';
import { freshDatabase } from '../helpers/pg';
import { MIGRATIONS } from '../../src/store/migrations';
import { emailSkeleton } from '../../src/accounts/lookalikes';
import { sentName, validateName } from '../../src/accounts/validate';

type Json = Record<string, any>;

const SECRET = 's3cr3t';
const ROOT = path.resolve(__dirname, '..', '..');
const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const xmlAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;');

/** Every spelling of a user and password in an endpoint, and endpoints with something unseen inside. */
const BAD_ENDPOINTS = (place: string): Array<[string, string]> => [
  ['user:password@', `https://u:${SECRET}@sp.example.invalid/${place}`],
  ['user@', `https://${SECRET}@sp.example.invalid/${place}`],
  [':@', `https://:@sp.example.invalid/${place}`],
  ['a backslash spelling', `https:\\\\u:${SECRET}@sp.example.invalid/${place}`],
  ['no slashes', `https:u:${SECRET}@sp.example.invalid/${place}`],
  ['three slashes', `https:///u:${SECRET}@sp.example.invalid/${place}`],
  ['a tab inside the user', `https://u:${SECRET}\t@sp.example.invalid/${place}`],
  ['a tab inside the path', `https://sp.example.invalid/${place}\tx`],
  ['a newline inside the host', `https://sp.exam\nple.invalid/${place}`],
];

const spMetadata = (acs: string, slo = 'https://sp.example.invalid/slo') => `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.invalid/saml">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${xmlAttr(slo)}"/>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${xmlAttr(acs)}" index="0"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;

/** A browser on the console: a cookie jar, the CSRF cookie, form posts. */
async function consoleOf(s: TestServer) {
  const jar = new Map<string, string>();
  const go = async (where: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const res = await fetch(s.url + where, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return { status: res.status, text: await res.text() };
  };
  const post = (where: string, fields: Record<string, string>) =>
    go(where, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ csrf: jar.get('gatehouse_csrf') ?? '', ...fields }).toString(),
    });
  await go('/signin');
  const signedIn = await post('/signin', { email: 'admin@example.com', password: PASSWORD });
  if (signedIn.status !== 303) throw new Error(`signin: ${signedIn.status}`);
  return { go, post };
}

t.test('finding 2: an ACS or logout URL with a user and password in any spelling, or a tab or newline inside, is refused everywhere', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  for (const [what, acs] of BAD_ENDPOINTS('acs')) {
    const shell = await cli(s.dataDir, ['saml', 'sp', 'add', '--entity-id', 'https://sp.example.invalid/saml', '--acs-url', acs]);
    t.equal(shell.code, 2, `--acs-url with ${what}: refused as bad input`);
    t.match(shell.err, /--acs-url must/, `--acs-url with ${what}: names the flag`);
    t.notMatch(shell.err, SECRET, `--acs-url with ${what}: not echoed`);

    const md = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', write(dir, 'acs.xml', spMetadata(acs))]);
    t.equal(md.code, 2, `metadata ACS with ${what}: refused`);
    t.match(md.err, /AssertionConsumerService Location must/);
    t.notMatch(md.err, SECRET);

    const slo = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', write(dir, 'slo.xml', spMetadata('https://sp.example.invalid/acs', acs))]);
    t.equal(slo.code, 2, `metadata SingleLogoutService with ${what}: refused`);
    t.match(slo.err, /SingleLogoutService Location must/);
    t.notMatch(slo.err, SECRET);

    const yaml = (key: string) =>
      key === 'acs'
        ? `version: 1\nsaml_sps:\n  - entity_id: https://sp.example.invalid/saml\n    acs: [{url: ${JSON.stringify(acs)}}]\n`
        : `version: 1\nsaml_sps:\n  - entity_id: https://sp.example.invalid/saml\n    acs: [{url: https://sp.example.invalid/acs}]\n    slo: [{url: ${JSON.stringify(acs)}, binding: redirect}]\n`;
    for (const key of ['acs', 'slo']) {
      const file = await cli(s.dataDir, ['config', 'apply', write(dir, `${key}.yaml`, yaml(key))]);
      t.equal(file.code, 2, `config file ${key} with ${what}: refused`);
      t.match(file.err, new RegExp(`${key}\\.yaml:\\d+:\\d+: ${key} must`), `config file ${key} with ${what}: at its line, naming the key`);
      t.notMatch(file.err, SECRET);
    }
  }
  const admin = await consoleOf(s);
  const form = await admin.post('/admin/saml', { entity_id: 'https://sp.example.invalid/saml', acs_url: `https://u:${SECRET}@sp.example.invalid/acs` });
  t.equal(form.status, 400, 'the console: refused');
  t.match(form.text, /must carry no user or password/);
  t.notMatch(form.text, SECRET);
  t.equal(await countRows(s, 'saml_sp'), 0, 'nothing stored');

  // An app on an internal host is an ordinary SP (the browser connects, not Gatehouse), and http is for localhost.
  for (const [entity, acs] of [
    ['https://internal.example.invalid/saml', 'https://10.0.0.5/saml/acs'],
    ['https://local.example.invalid/saml', 'http://localhost:4999/saml/acs'],
  ]) {
    const ok = await cli(s.dataDir, ['--json', 'saml', 'sp', 'add', '--entity-id', entity, '--acs-url', acs]);
    t.equal(ok.code, 0, ok.err);
    t.same(ok.json.acs_urls, [acs], 'kept as written');
  }
});

t.test('finding 2: ACS and logout URLs an earlier version stored with a password are shown and exported as ***', async (t) => {
  const s = await withAdmin(t);
  const made = await cli(s.dataDir, [
    '--json',
    'saml',
    'sp',
    'add',
    '--entity-id',
    'https://sp.example.invalid/saml',
    '--acs-url',
    'https://sp.example.invalid/acs',
  ]);
  t.equal(made.code, 0, made.err);
  // As an earlier version let them through.
  const acs = [
    { binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', location: `https://u:${SECRET}@sp.example.invalid/acs`, index: 0, is_default: true },
  ];
  const slo = [
    {
      binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
      location: `https://u:${SECRET}@sp.example.invalid/slo`,
      response_location: `https://u:${SECRET}@sp.example.invalid/slo-back`,
    },
  ];
  await s
    .db('saml_sp')
    .where({ id: made.json.id })
    .update({ acs: JSON.stringify(acs), slo: JSON.stringify(slo) });

  const shown = await cli(s.dataDir, ['saml', 'sp', 'show', made.json.id]);
  t.equal(shown.code, 0, shown.err);
  t.match(shown.out, /ACS URLs:\s+https:\/\/\*\*\*@sp\.example\.invalid\/acs/);
  t.match(shown.out, /logout URLs:\s+https:\/\/\*\*\*@sp\.example\.invalid\/slo/);
  const json = await cli(s.dataDir, ['--json', 'saml', 'sp', 'show', made.json.id]);
  t.same(json.json.acs_urls, ['https://***@sp.example.invalid/acs']);
  t.same(json.json.slo_urls, ['https://***@sp.example.invalid/slo']);
  const admin = await consoleOf(s);
  const outputs = [shown.out, json.out, (await cli(s.dataDir, ['--json', 'saml', 'sp', 'list'])).out, (await admin.go('/admin/saml')).text];
  for (const out of outputs) t.notMatch(out, SECRET, 'no password in show, list or the console');

  const exported = await cli(s.dataDir, ['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  t.notMatch(exported.out, SECRET, 'config export writes no password');
  t.match(exported.out, /url: https:\/\/\*\*\*@sp\.example\.invalid\/acs/);
  t.match(exported.out, /response_url: https:\/\/\*\*\*@sp\.example\.invalid\/slo-back/);
  const file = write(tempDir(t), 'export.yaml', exported.out);
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 2, 'applied back: refused until the URL is set anew');
  t.match(applied.err, /export\.yaml:\d+:\d+: acs must carry no user or password/);
  t.equal(JSON.parse((await s.db('saml_sp').where({ id: made.json.id }).first()).acs)[0].location, acs[0].location, 'nothing changed');
});

t.test('finding 3: --metadata that looks like a URL is judged as one; no refusal repeats a password or a query value', async (t) => {
  const s = await withAdmin(t);
  for (const given of [
    `\thttps://u:${SECRET}@sp.example.invalid/x`,
    ` https://u:${SECRET}@sp.example.invalid/x`,
    `https:\\\\u:${SECRET}@sp.example.invalid/x`,
    `https:u:${SECRET}@sp.example.invalid/x`,
    `https:///u:${SECRET}@sp.example.invalid/x`,
    `https://sp.example.invalid/x\t${SECRET}`,
    `ftp://u:${SECRET}@sp.example.invalid/x`,
  ]) {
    const r = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', given]);
    t.equal(r.code, 2, `${JSON.stringify(given)}: refused as bad input`);
    t.match(r.err, /--metadata must/, `${JSON.stringify(given)}: judged as a URL`);
    t.notMatch(r.err, /metadata file/, `${JSON.stringify(given)}: not read as a file`);
    t.notMatch(r.err, SECRET, `${JSON.stringify(given)}: not echoed`);
  }

  // A metadata URL that answers 404: the refusal says where, without the query's values.
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/x`;
  const withQuery = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', `${base}?u=user:${SECRET}@evil`]);
  t.equal(withQuery.code, 2);
  t.match(withQuery.err, `could not fetch the metadata from ${base}?u=…: HTTP 404`);
  t.notMatch(withQuery.err, SECRET);
  const bareKey = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', `${base}?user:${SECRET}@evil`]);
  t.equal(bareKey.code, 2);
  t.match(bareKey.err, `could not fetch the metadata from ${base}?…=…: HTTP 404`);
  t.notMatch(bareKey.err, SECRET);

  // A file is still a file.
  const missing = await cli(s.dataDir, ['saml', 'sp', 'add', '--metadata', path.join(tempDir(t), 'none.xml')]);
  t.equal(missing.code, 2);
  t.match(missing.err, /cannot read the metadata file .*none\.xml.*: ENOENT/);
  t.equal(await countRows(s, 'saml_sp'), 0);
});

t.test('finding 4: look-alikes written in punycode or with a Cyrillic palochka for the l are refused', async (t) => {
  const s = await withAdmin(t);
  const env = { PW: PASSWORD };
  const made = await cli(s.dataDir, ['user', 'create', '--email', 'victim@example.com', '--name', 'Victim', '--password-env', 'PW'], { env });
  t.equal(made.code, 0, made.err);
  for (const email of ['victim@xn--exmple-4nf.com', 'victim@examp\u04cfe.com', 'victim@exampie.com', 'victim@XN--EXMPLE-4NF.com', 'v\u04cfctim@example.com']) {
    t.equal(await emailSkeleton(email.toLowerCase()), await emailSkeleton('victim@example.com'), `${email}: the skeleton of victim@example.com`);
    const r = await cli(s.dataDir, ['user', 'create', '--email', email, '--name', 'Mallory', '--password-env', 'PW'], { env });
    t.equal(r.code, 3, `${email}: refused`);
    t.match(r.err, /looks like an existing account's address victim@example\.com/);
  }
  // A guest signing up gets the answer a taken address gets.
  t.equal((await setSignup(s, s.adminToken, 2097057)).status, 200);
  const guest = await s.action('user_account', 'signup', { email: 'victim@xn--exmple-4nf.com', name: 'M', password: PASSWORD, passwordConfirm: PASSWORD });
  t.equal(guest.status, 409);
  t.equal(errorCode(guest), 'email_taken');
  // Punycode that decodes to nothing valid stays as written, and other addresses are not caught.
  const other = await cli(s.dataDir, ['user', 'create', '--email', 'victim@xn--zz.example', '--name', 'V', '--password-env', 'PW'], { env });
  t.equal(other.code, 0, other.err);
  t.equal(await countRows(s, 'user_account'), 3);
});

/** A store migrated up to (and with) 20261213000000_email_skeletons, on this pass's dialect. */
async function storeAtOldSkeletons(t: Test): Promise<{ dir: string; db: string[]; knex: Knex }> {
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
  const upTo = MIGRATIONS.findIndex(([name]) => name === '20261213000000_email_skeletons') + 1;
  await knex.migrate.latest({
    migrationSource: { getMigrations: async () => MIGRATIONS.slice(0, upTo), getMigrationName: ([name]) => name, getMigration: async ([, m]) => m },
  });
  return { dir, db, knex };
}

t.test('finding 4: the upgrade gives every account the new skeleton, so a punycode look-alike of an old account is refused', async (t) => {
  const { dir, db, knex } = await storeAtOldSkeletons(t);
  const { default: toPrototypes } = await import('unhomoglyph');
  const oldSkeleton = (key: string) => toPrototypes(key.normalize('NFD').replace(/\p{Default_Ignorable_Code_Point}/gu, '')).normalize('NFD');
  const now = Date.now();
  const people = ['victim@example.com', 'bo@xn--exmple-4nf.com'];
  for (const [i, email] of people.entries()) {
    await knex('user_account').insert({
      reference_id: `00000000-0000-4000-8000-00000000000${i}`,
      email,
      email_key: email,
      email_skeleton: oldSkeleton(email),
      username: `u${i}`,
      name: 'N',
      password: '',
      permission: 0,
      created_at: now,
      updated_at: now,
    });
  }
  const migrated = await cli(dir, [...db, '--json', 'migrate']);
  t.equal(migrated.code, 0, migrated.err);
  for (const r of await knex('user_account').orderBy('id').select('email_key', 'email_skeleton'))
    t.equal(r.email_skeleton, await emailSkeleton(r.email_key), `${r.email_key}: the skeleton as computed now`);
  for (const email of ['victim@xn--exmple-4nf.com', 'victim@examp\u04cfe.com', 'bo@example.com']) {
    const r = await cli(dir, [...db, 'user', 'create', '--email', email, '--name', 'M', '--password-env', 'PW'], { env: { PW: PASSWORD } });
    t.equal(r.code, 3, `${email}: refused`);
    t.match(r.err, /looks like an existing account's address/);
  }
});

t.test('finding 5: a name that shows nothing or holds a lone surrogate is refused; one that shows something is kept', async (t) => {
  for (const name of [
    '\u2800\u2800',
    '\u2800',
    ' \u2800 \u2800 ',
    '\u00a0',
    '\u00a0\u2800',
    '\u3164',
    '\u115f',
    '\u1160',
    '\uffa0',
    '\u{1d159}',
    '\u3000\u2800',
  ]) {
    t.throws(() => validateName(name), { code: 'invalid_input' }, `${JSON.stringify(name)}: refused`);
    t.throws(() => validateName(name, 'sent'), { code: 'invalid_input' }, `${JSON.stringify(name)} from another system: refused`);
  }
  t.throws(() => validateName('\u2800\u2800'), { message: /name shows nothing/ });
  for (const name of ['A\ud800B', '\udc00', 'Ann \ud83d']) {
    t.throws(() => validateName(name), { message: /not well-formed/ }, `${JSON.stringify(name)}: refused`);
    t.throws(() => validateName(name, 'sent'), { message: /not well-formed/ }, `${JSON.stringify(name)} from another system: refused`);
  }
  for (const name of ['A\u2800B', 'Ann \u{1f600}', '\u{1f3f3}\ufe0f\u200d\u{1f308}', 'Zoë']) t.equal(validateName(name), name, `${JSON.stringify(name)}: kept`);
  t.equal(sentName('\u2800\u2800', 'Bob'), 'Bob', 'another system: the next name that shows something');

  // On the ways in: the shell, signup over HTTP, a group's name.
  const s = await withAdmin(t);
  const env = { PW: PASSWORD };
  const blank = await cli(s.dataDir, ['user', 'create', '--email', 'b@example.com', '--name', '\u2800\u2800', '--password-env', 'PW'], { env });
  t.equal(blank.code, 2);
  t.match(blank.err, /name shows nothing/);
  const lone = await cli(s.dataDir, ['user', 'create', '--email', 'l@example.com', '--name', 'A\ud800B', '--password-env', 'PW'], { env });
  t.equal(lone.code, 2);
  t.match(lone.err, /not well-formed/);
  t.equal((await setSignup(s, s.adminToken, 2097057)).status, 200);
  for (const name of ['\u2800\u2800', 'A\ud800B']) {
    const r = await s.action('user_account', 'signup', { email: 'g@example.com', name, password: PASSWORD, passwordConfirm: PASSWORD });
    t.equal(r.status, 400, `signup named ${JSON.stringify(name)}: refused`);
  }
  const group = await cli(s.dataDir, ['group', 'create', '\u2800']);
  t.equal(group.code, 2, 'a group named with a Braille blank: refused');
  const email = await cli(s.dataDir, ['user', 'create', '--email', 'a\ud800@example.com', '--name', 'A', '--password-env', 'PW'], { env });
  t.equal(email.code, 2, 'an address with a lone surrogate: refused');
  t.equal(await countRows(s, 'user_account'), 1, 'only the administrator');
});

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

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const patchOf = (...ops: Json[]) => ({ schemas: [PATCH], Operations: ops });

t.test('finding 6: SCIM members are read one way only: no key twice in two cases, no unknown key, ids without case', async (t) => {
  const s = await withAdmin(t);
  const scim = await scimClient(s);
  const u1 = await scim('POST', '/Users', { schemas: [USER], userName: 'u1', emails: [{ value: 'u1@example.com', primary: true }] });
  t.equal(u1.status, 201);
  const inner = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'inner' });
  const outer = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'outer' });
  t.equal(outer.status, 201);
  const U1: string = u1.body.id;
  const G: string = inner.body.id;
  const at = `/Groups/${outer.body.id}`;
  const members = async () => ((await scim('GET', at)).body.members ?? []).map((m: Json) => m.value).sort();

  const refused: Array<[string, Json]> = [
    ['value and VALUE', { value: U1, VALUE: G }],
    ['Value and value', { Value: G, value: U1 }],
    ['an unknown key', { value: U1, bogus: 'x' }],
    ['"value " with a space', { 'value ': U1 }],
    ['$REF beside $ref', { $ref: `Users/${U1}`, $REF: `Groups/${G}` }],
  ];
  for (const [what, member] of refused) {
    const patched = await scim('PATCH', at, patchOf({ op: 'add', path: 'members', value: [member] }));
    t.equal(patched.status, 400, `PATCH add, ${what}: refused`);
    t.equal(patched.body.scimType, 'invalidValue', what);
    const posted = await scim('POST', '/Groups', { schemas: [GROUP], displayName: `g ${what}`, members: [member] });
    t.equal(posted.status, 400, `POST, ${what}: refused`);
    const put = await scim('PUT', at, { schemas: [GROUP], displayName: 'outer', members: [member] });
    t.equal(put.status, 400, `PUT, ${what}: refused`);
  }
  t.same(await members(), [], 'nothing added');
  const twice = await scim('PATCH', at, { schemas: [PATCH], Operations: [{ op: 'add', OP: 'remove', path: 'members', value: [{ value: U1 }] }] });
  t.equal(twice.status, 400, 'an operation with op and OP: refused');
  const twoNames = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'a', DISPLAYNAME: 'b' });
  t.equal(twoNames.status, 400, 'a body with displayName and DISPLAYNAME: refused');

  // An id in upper case names the same member when added, filtered on, and removed.
  const added = await scim('PATCH', at, patchOf({ op: 'add', path: 'members', value: [{ value: U1.toUpperCase() }, { value: G.toUpperCase() }] }));
  t.equal(added.status, 200, JSON.stringify(added.body));
  t.same(await members(), [U1, G].sort(), 'both added');
  const removed = await scim('PATCH', at, patchOf({ op: 'remove', path: `members[value eq "${U1.toUpperCase()}"]` }));
  t.equal(removed.status, 200);
  t.same(await members(), [G], 'the person is removed');
  const again = await scim('PATCH', at, patchOf({ op: 'remove', path: `members[VALUE eq "${G.toUpperCase()}"]` }));
  t.equal(again.status, 200);
  t.same(await members(), [], 'the group is removed');
  // Attribute names in another case reach the same attribute, not a second one beside it.
  t.equal((await scim('PATCH', at, patchOf({ op: 'add', path: 'Members', value: [{ Value: U1 }] }))).status, 200);
  t.same(await members(), [U1], 'added through Members');
  t.equal((await scim('PATCH', at, patchOf({ op: 'replace', value: { DisplayName: 'renamed' } }))).status, 200);
  t.equal((await scim('GET', at)).body.displayName, 'renamed', 'renamed through DisplayName');
  // Filters on ids: without case too.
  t.equal((await scim('GET', `/Users?filter=${encodeURIComponent(`id eq "${U1.toUpperCase()}"`)}`)).body.totalResults, 1);
  t.equal((await scim('GET', `/Groups?filter=${encodeURIComponent(`id eq "${G.toUpperCase()}"`)}`)).body.totalResults, 1);
});

t.test('finding 7: Authelia users named constructor and __proto__ are read as users, each judged by the username rule', async (t) => {
  const s = await withAdmin(t);
  const file = write(
    tempDir(t),
    'users_database.yml',
    `users:
  constructor:
    displayname: Connie
    email: connie@example.com
  __proto__:
    displayname: Proto
    email: proto@example.com
  toString:
    displayname: Tess
    email: tess@example.com
`,
  );
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'authelia', file]);
  t.equal(r.code, 0, r.err);
  const byEmail = (email: string) => r.json.people.find((p: Json) => p.email === email);
  t.match(byEmail('connie@example.com'), { outcome: 'created' });
  t.equal((await s.db('user_account').where({ email_key: 'connie@example.com' }).first())?.username, 'constructor', 'imported under its name');
  t.match(byEmail('tess@example.com'), { outcome: 'created' });
  t.equal((await s.db('user_account').where({ email_key: 'tess@example.com' }).first())?.username, 'tostring');
  t.match(byEmail('proto@example.com'), { outcome: 'skipped', reason: /invalid username/ }, '__proto__: skipped for what it is, an invalid username');
  t.notMatch(JSON.stringify(r.json), /not a user entry/);
});

t.test('finding 8: a reader that goes away ends a command quietly, with exit 0', async (t) => {
  const s = await withAdmin(t);
  // More output than a pipe holds (64 KiB): the write cannot finish before the reader is gone.
  const groups = Array.from({ length: 400 }, (_, i) => `  - name: group-with-a-long-name-${String(i).padStart(4, '0')}\n`).join('');
  const file = write(tempDir(t), 'groups.yaml', `version: 1\ngroups:\n${groups}`);
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  const db = dbForDir(s.dataDir);
  for (const args of [
    ['group', 'list'],
    ['--json', 'group', 'list'],
  ]) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'bin', 'gatehouse.ts'), '--data-dir', s.dataDir, ...(db ? ['--db', db] : []), ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // The reader goes away at once, as `head` does once it has its lines.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    t.equal(code, 0, `${args.join(' ')}: exit 0`);
    t.equal(stderr, '', `${args.join(' ')}: nothing on stderr (no EPIPE stack trace)`);
  }
});
