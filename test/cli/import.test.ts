// `gatehouse import` (contract section 24): each format with hashes made by the tools that make
// them (openssl passwd -6, node's pbkdf2 as Keycloak does, bcrypt, @node-rs/argon2), then a real
// sign-in through the server with the original password, after which the stored hash is
// Gatehouse's own bcrypt; a wrong password fails. The same file again changes nothing; a local
// account's password is kept without --overwrite; --dry-run writes nothing; hostile rows (a
// formula, escape sequences, rounds that never end, malformed hashes) are refused or shown clean.
import { execFileSync } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import bcrypt from 'bcrypt';
import { hash as argon2 } from '@node-rs/argon2';
import { cli } from '../helpers/cli';
import { countRows, PASSWORD, tempDir, withAdmin, type TestServer } from '../helpers/server';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const shaCrypt = (password: string, salt: string) => execFileSync('openssl', ['passwd', '-6', '-salt', salt, password]).toString().trim();
const bcryptOf = (password: string) => bcrypt.hashSync(password, 5);
const keycloakCredential = (password: string, algorithm: 'pbkdf2-sha256' | 'pbkdf2-sha512', iterations: number) => {
  const salt = randomBytes(16);
  const value = pbkdf2Sync(password, salt, iterations, 64, algorithm === 'pbkdf2-sha256' ? 'sha256' : 'sha512');
  return {
    type: 'password',
    createdDate: 1700000000000,
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters: {} }),
  };
};

const storedPassword = async (s: TestServer, email: string): Promise<string> => (await s.db('user_account').where({ email_key: email }).first()).password;

/** Signs in with the file's password, then checks the stored hash became Gatehouse's bcrypt, and that a wrong password fails. */
async function signsInAndRehashes(t: Test, s: TestServer, email: string, before: RegExp) {
  t.match(await storedPassword(s, email), before, `${email}: the imported hash is kept as it was`);
  const wrong = await s.action('user_account', 'signin', { email, password: 'not the password at all' });
  t.not(wrong.status, 200, `${email}: a wrong password fails`);
  await s.signin(email, PASSWORD);
  await s.core.settle();
  t.match(await storedPassword(s, email), /^\$2b\$04\$/, `${email}: after the first sign-in the hash is Gatehouse's own`);
  await s.signin(email, PASSWORD);
}

const byEmail = (report: { people: Array<{ email: string }> }, email: string) =>
  report.people.find((p) => p.email === email) as unknown as { outcome: string; reason?: string };

t.test('CSV: every hash kind signs in, groups made, bad rows skipped with their reason, shown without control characters', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'local@example.com', '--password-stdin'], { stdin: 'a local password of some length' })).code, 0);
  const pbkdf2Salt = randomBytes(16);
  const pbkdf2 = `$pbkdf2-sha256$i=29000$${pbkdf2Salt.toString('base64').replace(/=+$/, '')}$${pbkdf2Sync(PASSWORD, pbkdf2Salt, 29000, 32, 'sha256').toString('base64').replace(/=+$/, '')}`;
  const rows = [
    'email,name,username,groups,password_hash',
    `Ann@Example.com,Ann Archer,ann,staff;ops,${bcryptOf(PASSWORD)}`,
    `bob@example.com,"Bob, the ""builder""",,staff,${shaCrypt(PASSWORD, 'Zq7Sx1Lk')}`,
    `cat@example.com,Cat,,ops,"${await argon2(PASSWORD)}"`,
    `joe@example.com,Joe,,,${await argon2(PASSWORD)}`,
    `dan@example.com,"=HYPERLINK(""http://evil.example"",""x"")",,,${pbkdf2}`,
    'eve@example.com,Eve,,,',
    `ann@example.com,Ann Again,,,${bcryptOf(PASSWORD)}`,
    'not-an-email,Nobody,,,',
    `"\u001b[31mred@example.com",Red,,,`,
    `"zed@example.com",Zed,,"\u001b[2Jwipe;users",`,
    `fay@example.com,Fay,,,$6$rounds=999999999$abc$${'a'.repeat(86)}`,
    'gus@example.com,Gus,,,$6$abc$short',
    'hal@example.com,Hal,,,$1$abc$md5cryptisnotknown',
    `local@example.com,Local,,,${bcryptOf(PASSWORD)}`,
    `admin@example.com,Admin,,,${bcryptOf(PASSWORD)}`,
  ];
  const file = write(dir, 'people.csv', '\uFEFF' + rows.join('\r\n') + '\r\n');
  const accountsBefore = await countRows(s, 'user_account');

  const dry = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file, '--dry-run']);
  t.equal(dry.code, 0, dry.err);
  t.equal(dry.json.dry_run, true);
  t.equal(dry.json.created, 6, 'a dry run says what would be made');
  t.equal(await countRows(s, 'user_account'), accountsBefore, 'a dry run writes no account');
  t.notOk(await s.db('usergroup').where({ name: 'staff' }).first(), 'nor a group');

  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file]);
  t.equal(r.code, 0, r.err);
  const report = r.json;
  t.match(report, { format: 'csv', dry_run: false, created: 6, updated: 0, unchanged: 0 });
  t.same(
    report.groups.map((g: { name: string; outcome: string }) => [g.name, g.outcome]),
    [
      ['staff', 'created'],
      ['ops', 'created'],
      ['[2Jwipe', 'skipped'],
      ['users', 'skipped'],
    ],
    'a group name with control characters is refused and shown without them; users is never a file’s',
  );
  for (const e of ['Ann@Example.com', 'bob@example.com', 'cat@example.com', 'dan@example.com', 'eve@example.com'])
    t.equal(byEmail(report, e).outcome, 'created', e);
  t.match(byEmail(report, 'ann@example.com').reason, /duplicate in the file \(first at row 1 \(line 2\)\)/);
  t.equal(byEmail(report, 'not-an-email').reason, 'invalid email');
  const red = report.people.find((p: { email: string }) => p.email.endsWith('red@example.com'));
  t.equal(red.email, '[31mred@example.com', 'the escape character is not echoed');
  t.match(byEmail(report, 'fay@example.com').reason, /sha512-crypt rounds 999999999 exceed 100000/);
  t.equal(byEmail(report, 'gus@example.com').reason, 'malformed sha512-crypt hash');
  t.match(byEmail(report, 'hal@example.com').reason, /unknown hash format/);
  t.match(byEmail(report, 'local@example.com'), { outcome: 'skipped', reason: /already exists/ });
  t.match(byEmail(report, 'admin@example.com'), { outcome: 'skipped', reason: /an administrator/ });
  t.match(byEmail(report, 'joe@example.com').reason, /7 cells where the header has 5/);
  t.equal(report.skipped, 9);

  // The human report: one line per person, nothing that drives a terminal.
  const human = await cli(s.dataDir, ['import', '--from', 'csv', file, '--dry-run']);
  t.notOk(human.out.includes('\u001b'), 'no escape character reaches the terminal');
  t.match(human.out, /already exists \(--overwrite brings/);
  t.match(human.out, /^dry run, nothing written: 0 created, 0 updated, 4 unchanged, 11 skipped$/m);

  t.equal(
    (await s.db('user_account').where({ email_key: 'dan@example.com' }).first()).name,
    '=HYPERLINK("http://evil.example","x")',
    'a formula is stored as text',
  );
  t.same((await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.members.map((m: { email: string }) => m.email).sort(), [
    'Ann@Example.com',
    'bob@example.com',
  ]);
  t.equal((await s.db('user_account').where({ email_key: 'ann@example.com' }).first()).username, 'ann');
  const audit = (await cli(s.dataDir, ['--json', 'audit', '--limit', '200'])).json.events.filter((e: { event: string }) => e.event === 'account_imported');
  t.equal(audit.length, 6, 'one account_imported event per account made');

  await signsInAndRehashes(t, s, 'ann@example.com', /^\$2b\$05\$/);
  await signsInAndRehashes(t, s, 'bob@example.com', /^\$6\$Zq7Sx1Lk\$/);
  await signsInAndRehashes(t, s, 'cat@example.com', /^\$argon2id\$/);
  await signsInAndRehashes(t, s, 'dan@example.com', /^\$pbkdf2-sha256\$i=29000\$/);
  const firsts = (await cli(s.dataDir, ['--json', 'audit', '--limit', '200'])).json.events.filter((e: { event: string }) => e.event === 'imported_signin');
  t.same(
    firsts.map((e: { details: { hash: string } }) => e.details.hash).sort(),
    ['argon2id', 'pbkdf2-sha256', 'sha512-crypt'],
    "each imported hash's first sign-in is audited as such, once (bcrypt at another cost is simply re-hashed)",
  );
  t.not((await s.action('user_account', 'signin', { email: 'eve@example.com', password: PASSWORD })).status, 200, 'no hash: no password to sign in with');

  const again = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file]);
  t.match(again.json, { created: 0, updated: 0 }, 'the same file again changes nothing');
  t.match(byEmail(again.json, 'ann@example.com'), { outcome: 'skipped' });
  t.same(
    again.json.groups.map((g: { outcome: string }) => g.outcome),
    ['existing', 'existing', 'skipped', 'skipped'],
  );
  t.match(await storedPassword(s, 'ann@example.com'), /^\$2b\$04\$/, 'the new hash is kept');

  const before = await storedPassword(s, 'local@example.com');
  const over = await cli(s.dataDir, ['--json', 'import', '--from', 'csv', file, '--overwrite']);
  t.match(byEmail(over.json, 'local@example.com'), { outcome: 'updated', reason: 'name, password' });
  t.match(byEmail(over.json, 'admin@example.com'), { outcome: 'skipped', reason: /an administrator/ }, 'never an administrator, even with --overwrite');
  t.not(await storedPassword(s, 'local@example.com'), before);
  await signsInAndRehashes(t, s, 'local@example.com', /^\$2b\$05\$/);
});

t.test('a CSV that is not one is refused as a whole, writing nothing', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const bad = await cli(s.dataDir, ['import', '--from', 'csv', write(dir, 'a.csv', 'email,shoe_size\nann@example.com,9\n')]);
  t.equal(bad.code, 2, 'invalid input');
  t.match(bad.err, /unknown column shoe_size/);
  const quote = await cli(s.dataDir, ['import', '--from', 'csv', write(dir, 'b.csv', 'email,name\nann@example.com,"Ann\n')]);
  t.match(quote.err, /not an import CSV file: CSV_QUOTE_NOT_CLOSED/);
  t.equal((await cli(s.dataDir, ['import', '--from', 'csv', path.join(dir, 'none.csv')])).code, 4);
  t.equal((await cli(s.dataDir, ['import', '--from', 'ldif', path.join(dir, 'a.csv')])).code, 2, 'an unknown format is a usage error');
});

t.test("Authelia's users database: argon2id and sha512-crypt, groups, a disabled person", async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const yaml = `---
users:
  john:
    disabled: false
    displayname: "John Doe"
    password: "${await argon2(PASSWORD)}"
    email: john.doe@authelia.com
    groups:
      - admins
      - dev
  harry:
    displayname: "Harry Potter"
    password: "${shaCrypt(PASSWORD, 'jgiCMRyGXzoqpxS3')}"
    email: harry.potter@authelia.com
    groups: [dev]
  bob:
    displayname: "Bob Dylan"
    password: "${bcryptOf(PASSWORD)}"
    email: bob.dylan@authelia.com
    disabled: true
...
`;
  const file = write(dir, 'users_database.yml', yaml);
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'authelia', file]);
  t.equal(r.code, 0, r.err);
  t.match(r.json, { created: 3, skipped: 0 });
  t.same(
    r.json.groups.map((g: { name: string }) => g.name),
    ['admins', 'dev'],
  );
  t.equal((await s.db('user_account').where({ email_key: 'john.doe@authelia.com' }).first()).username, 'john');
  await signsInAndRehashes(t, s, 'john.doe@authelia.com', /^\$argon2id\$/);
  await signsInAndRehashes(t, s, 'harry.potter@authelia.com', /^\$6\$jgiCMRyGXzoqpxS3\$/);
  t.equal((await s.db('user_account').where({ email_key: 'bob.dylan@authelia.com' }).first()).disabled ? 1 : 0, 1, 'disabled stays disabled');
  t.not((await s.action('user_account', 'signin', { email: 'bob.dylan@authelia.com', password: PASSWORD })).status, 200);
  const again = await cli(s.dataDir, ['--json', 'import', '--from', 'authelia', file]);
  t.match(again.json, { created: 0, updated: 0 }, 'again: nothing changes');
  t.match((await cli(s.dataDir, ['import', '--from', 'authelia', write(dir, 'x.yml', 'users: [1, 2]\n')])).err, /no users: mapping/);
});

t.test('an Auth0 export (NDJSON, bcrypt)', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const lines = [
    { user_id: 'auth0|1', email: 'ivy@example.com', name: 'Ivy', username: 'ivy', email_verified: true, password_hash: bcryptOf(PASSWORD) },
    { user_id: 'auth0|2', email: 'jon@example.com', name: 'Jon', email_verified: true },
    { user_id: 'auth0|3', email: 'kim@example.com', name: 'Kim', email_verified: true, password_hash: '$2b$31$' + 'a'.repeat(53) },
  ];
  const file = write(dir, 'users.ndjson', lines.map((l) => JSON.stringify(l)).join('\n') + '\nnot json\n');
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'auth0', file]);
  t.equal(r.code, 0, r.err);
  t.match(r.json, { created: 2, skipped: 2 });
  t.match(byEmail(r.json, 'kim@example.com').reason, /bcrypt cost 31 is outside 4 to 13/);
  t.match(r.json.people[3], { at: 'line 4', outcome: 'skipped', reason: 'not a JSON object' });
  await signsInAndRehashes(t, s, 'ivy@example.com', /^\$2b\$05\$/);
  t.match((await cli(s.dataDir, ['--json', 'import', '--from', 'auth0', file])).json, { created: 0, updated: 0 });
});

t.test('a Keycloak realm export: PBKDF2-SHA256 and SHA512, groups with subgroups as nesting', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const realm = {
    realm: 'acme',
    groups: [
      { id: 'g1', name: 'staff', path: '/staff', subGroups: [{ id: 'g2', name: 'engineering', path: '/staff/engineering', subGroups: [] }] },
      { id: 'g3', name: 'unused', path: '/unused', subGroups: [] },
    ],
    users: [
      {
        username: 'lea',
        email: 'lea@example.com',
        firstName: 'Lea',
        lastName: 'Lind',
        enabled: true,
        emailVerified: true,
        credentials: [keycloakCredential(PASSWORD, 'pbkdf2-sha256', 27500)],
        groups: ['/staff/engineering'],
      },
      {
        username: 'max',
        email: 'max@example.com',
        firstName: 'Max',
        enabled: true,
        emailVerified: true,
        credentials: [keycloakCredential(PASSWORD, 'pbkdf2-sha512', 30000)],
        groups: ['/staff'],
      },
      {
        username: 'ned',
        email: 'ned@example.com',
        enabled: true,
        credentials: [{ type: 'password', secretData: '{"value":"AAAA","salt":"AAAA"}', credentialData: '{"hashIterations":5,"algorithm":"argon2"}' }],
      },
      {
        username: 'oli',
        email: 'oli@example.com',
        enabled: true,
        credentials: [{ ...keycloakCredential(PASSWORD, 'pbkdf2-sha256', 1), credentialData: '{"hashIterations":20000000,"algorithm":"pbkdf2-sha256"}' }],
      },
    ],
  };
  const file = write(dir, 'realm-export.json', JSON.stringify(realm, null, 2));
  const r = await cli(s.dataDir, ['--json', 'import', '--from', 'keycloak', file]);
  t.equal(r.code, 0, r.err);
  t.match(r.json, { created: 2, skipped: 2 });
  t.match(byEmail(r.json, 'ned@example.com').reason, /argon2, which Gatehouse cannot check/);
  t.match(byEmail(r.json, 'oli@example.com').reason, /PBKDF2 iterations 20000000 are outside/);
  t.same(
    r.json.groups.map((g: { name: string; outcome: string; nestedIn?: string }) => [g.name, g.outcome, g.nestedIn ?? null]),
    [
      ['staff', 'created', null],
      ['engineering', 'created', 'staff'],
    ],
    'only the groups people are in (and their parents), the subgroup nested',
  );
  const staff = (await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json;
  t.same(
    staff.groups.map((g: { name: string }) => g.name),
    ['engineering'],
  );
  t.equal((await s.db('user_account').where({ email_key: 'lea@example.com' }).first()).name, 'Lea Lind');
  await signsInAndRehashes(t, s, 'lea@example.com', /^\$pbkdf2-sha256\$i=27500\$/);
  await signsInAndRehashes(t, s, 'max@example.com', /^\$pbkdf2-sha512\$i=30000\$/);
  const again = await cli(s.dataDir, ['--json', 'import', '--from', 'keycloak', file]);
  t.match(again.json, { created: 0, updated: 0 }, 'again: nothing changes');
});

t.test('what is not a regular file, or is too large, is refused before it is read (found by an outside review)', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const fifo = path.join(dir, 'fifo.csv');
  execFileSync('mkfifo', [fifo]);
  for (const file of ['/dev/zero', fifo, dir]) {
    const r = await cli(s.dataDir, ['import', '--from', 'csv', file, '--dry-run']);
    t.equal(r.code, 2, file);
    t.match(r.err, /is not a regular file/, file);
  }
  const big = path.join(dir, 'big.csv');
  fs.writeFileSync(big, '');
  fs.truncateSync(big, 513 * 1024 * 1024);
  const r = await cli(s.dataDir, ['import', '--from', 'csv', big, '--dry-run']);
  t.match(r.err, /larger than 512 MiB/);
});
