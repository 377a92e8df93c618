// One account maker (issue 73): every way an account is made goes through accounts/make.ts, and
// each account made has the same shape. The ways are the real ones: guest signup and the record
// API over HTTP, the shell, a passkey signup in Chromium, an invitation, an upstream provider's
// newcomer, a SCIM client, an import of each of the four formats and a directory source in a real
// slapd. Each account: its own row, the tables' default permissions, its address's look-alike
// skeleton, exactly its home group and `users`, the origin of where it came from, and one audit
// row of its making. The second test reads src/: the writes behind that shape (an account, a home
// group, a membership, a nesting) have one home each, so no way in can make an account, or put
// someone in a group, around those rules.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import bcrypt from 'bcrypt';
import { cli } from '../helpers/cli';
import { launch } from '../helpers/browser';
import { passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { ADMIN_DN, ADMIN_PASSWORD, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';
import { PASSWORD, startTestServer, tempDir, TEST_STORE, type TestServer } from '../helpers/server';
import { emailSkeleton } from '../../src/accounts/lookalikes';

type Json = Record<string, any>;

const hash = bcrypt.hashSync(PASSWORD, 4);
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

/** Each way in, the address it makes, and what differs by way: the stored origin, the audit event, a confirmed address. */
const WAYS = [
  { way: 'guest signup', email: 'signup@example.com', origin: null, event: 'signup', verified: false },
  { way: 'the record API', email: 'record@example.com', origin: null, event: 'signup', verified: false },
  { way: 'the shell', email: 'shell@example.com', origin: null, event: 'signup', verified: false },
  { way: 'a passkey signup', email: 'passkey@example.com', origin: null, event: 'signup', verified: false },
  { way: 'an invitation', email: 'invited@example.com', origin: null, event: 'signup', verified: true },
  { way: 'an upstream provider', email: 'upstream@example.com', origin: null, event: 'signup', verified: false },
  { way: 'SCIM', email: 'scim@example.com', origin: null, event: 'signup', verified: true },
  { way: 'a CSV import', email: 'csv@example.com', origin: 'csv', event: 'account_imported', verified: true },
  { way: 'a Keycloak import', email: 'keycloak@example.com', origin: 'keycloak', event: 'account_imported', verified: true },
  { way: 'an Authelia import', email: 'authelia@example.com', origin: 'authelia', event: 'account_imported', verified: true },
  { way: 'an Auth0 import', email: 'auth0@example.com', origin: 'auth0', event: 'account_imported', verified: false },
  { way: 'a directory source', email: 'ldap@example.org', origin: 'ldap', event: 'account_imported', verified: true },
] as const;

function write(t: Test, name: string, text: string): string {
  const file = path.join(tempDir(t), name);
  fs.writeFileSync(file, text);
  return file;
}

/** A browser without a browser for the upstream's redirects: cookies kept (as test/upstream/attacks.test.ts). */
async function throughUpstream(s: TestServer, provider: string): Promise<number> {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const own = url.startsWith(s.url);
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(own ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
    await res.text();
    return { status: res.status, location: res.headers.get('location') };
  };
  await go(`${s.url}/signin`);
  const started = await go(`${s.url}/signin/provider/${provider}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
    body: new URLSearchParams({ csrf: cookies.get('gatehouse_csrf') ?? '' }).toString(),
  });
  const back = await go(started.location!);
  return (await go(back.location!.replace(s.config.publicUrl, s.url))).status;
}

/** What an account's making left: the same for every way but its origin, its audit event and its confirmed address. */
async function shapeOf(s: TestServer, email: string) {
  const account = await s.db('user_account').where({ email_key: email }).first();
  if (!account) return undefined;
  const defaults = Object.fromEntries(
    (await s.db('world').whereIn('table_name', ['user_account', 'usergroup', 'membership']).select('table_name', 'default_permission')).map((w) => [
      w.table_name,
      Number(w.default_permission),
    ]),
  );
  const owned = await s.db('usergroup').where({ user_account_id: account.id });
  const memberships = await s
    .db('membership as m')
    .join('usergroup as g', 'g.id', 'm.usergroup_id')
    .where('m.account_id', account.id)
    .select('g.id', 'g.system_role', 'm.permission', 'm.user_account_id');
  const made = await s.db('audit_event').where({ account: account.reference_id }).whereIn('event', ['signup', 'account_imported', 'bootstrap']).select('event');
  return {
    ownsItsRow: Number(account.user_account_id) === Number(account.id),
    defaultPermission: Number(account.permission) === defaults.user_account,
    skeleton: account.email_skeleton === (await emailSkeleton(account.email_key)),
    homeGroup: owned.map((g) => ({ name: g.name, defaultPermission: Number(g.permission) === defaults.usergroup, system: g.system_role })),
    memberships: memberships
      .map((m) => ({
        group: m.system_role ?? (owned.some((g) => Number(g.id) === Number(m.id)) ? 'home' : 'other'),
        defaultPermission: Number(m.permission) === defaults.membership,
        owned: Number(m.user_account_id) === Number(account.id),
      }))
      .sort((a, b) => a.group.localeCompare(b.group)),
    origin: account.origin ?? null,
    audit: made.map((r) => r.event),
    verified: Boolean(account.email_verified),
    name: account.name,
  };
}

t.test('every way in makes the same shape of account: its group, users, origin, skeleton, audit row', async (t) => {
  const { s, adminToken } = await passkeyServer(t);

  // Guest signup (open: passkeyServer opened it) and the record API.
  t.equal(
    (await s.action('user_account', 'signup', { email: 'signup@example.com', name: 'Signup', password: PASSWORD, passwordConfirm: PASSWORD })).status,
    200,
  );
  const record = await s.call('POST', '/api/user_account', {
    token: adminToken,
    body: { data: { type: 'user_account', attributes: { email: 'record@example.com', name: 'Record', password: PASSWORD, passwordConfirm: PASSWORD } } },
  });
  t.equal(record.status, 201, record.text);

  // The shell.
  const shell = await cli(s.dataDir, ['user', 'create', '--email', 'shell@example.com', '--name', 'Shell', '--password-stdin'], { stdin: PASSWORD });
  t.equal(shell.code, 0, shell.err);

  // A passkey signup: Chromium's virtual authenticator, the actions as a page calls them.
  const browser = await launch(t);
  const a = await withAuthenticator(browser);
  await a.page.goto(`${s.config.publicUrl}/ping`);
  await a.page.addScriptTag({ url: '/assets/webauthn.js' });
  const passkey = await a.page.evaluate(async () => {
    const call = async (name: string, attributes: Json) => {
      const r = await fetch(`/action/user_account/${name}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ attributes }),
      });
      return { status: r.status, body: (await r.json()) as Json[] };
    };
    const options = await call('passkey_options', { purpose: 'signup', email: 'passkey@example.com', name: 'Passkey' });
    const optionsJSON = options.body.find((i) => i.Attributes.key === 'passkey_options')!.Attributes.value;
    const response = await (globalThis as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON });
    return (await call('passkey_register', { response })).status;
  });
  t.equal(passkey, 200, 'a passkey signup');

  // An invitation, accepted with a password.
  const invited = await cli(s.dataDir, ['--json', 'user', 'invite', 'invited@example.com', '--print-link']);
  t.equal(invited.code, 0, invited.err);
  const invite = new URL(invited.json.link).searchParams.get('invite')!;
  t.equal((await s.action('user_account', 'signup', { invite, name: 'Invited', password: PASSWORD, passwordConfirm: PASSWORD })).status, 200);

  // An upstream provider's newcomer, while signup is open.
  const upstream = await startHostileUpstream(t, 'gatehouse-client');
  const provider = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'corp', '--issuer', upstream.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S'],
    { env: { S: 'a-secret' } },
  );
  t.equal(provider.code, 0, provider.err);
  upstream.email = 'upstream@example.com';
  upstream.name = 'Upstream';
  t.equal(await throughUpstream(s, 'corp'), 303, 'signed in as a new account');

  // SCIM.
  const token = (await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp'])).json.token;
  const scim = await fetch(`${s.url}/scim/v2/Users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
    body: JSON.stringify({ schemas: [USER], userName: 'scim', displayName: 'Scim', emails: [{ value: 'scim@example.com', primary: true }] }),
  });
  t.equal(scim.status, 201, await scim.text());

  // The four import formats.
  const imports: Array<[string, string, string]> = [
    ['csv', 'people.csv', `email,name,password_hash\ncsv@example.com,Csv,${hash}\n`],
    [
      'keycloak',
      'realm.json',
      JSON.stringify({
        realm: 'acme',
        users: [{ username: 'keycloak', email: 'keycloak@example.com', firstName: 'Keycloak', enabled: true, emailVerified: true }],
      }),
    ],
    ['authelia', 'users_database.yml', `users:\n  authelia:\n    displayname: Authelia\n    password: "${hash}"\n    email: authelia@example.com\n`],
    ['auth0', 'users.ndjson', JSON.stringify({ email: 'auth0@example.com', name: 'Auth0', password_hash: hash }) + '\n'],
  ];
  for (const [format, name, text] of imports) {
    const r = await cli(s.dataDir, ['--json', 'import', '--from', format, write(t, name, text)]);
    t.equal(r.code, 0, r.err);
    t.equal(r.json.created, 1, `${format}: ${JSON.stringify(r.json.people)}`);
  }

  // A directory source.
  const slapd = await startSlapd(t);
  await slapd.add(personLdif('ldap', { cn: 'Ldap', mail: 'ldap@example.org' }));
  const source = await cli(
    s.dataDir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(source.code, 0, source.err);
  const sync = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(sync.code, 0, sync.err);
  t.match(sync.json.people, { created: 1 });

  for (const w of WAYS) {
    const shape = await shapeOf(s, w.email);
    t.ok(shape, `${w.way}: an account`);
    if (!shape) continue;
    t.same(
      shape,
      {
        ownsItsRow: true,
        defaultPermission: true,
        skeleton: true,
        homeGroup: [{ name: `Home group of ${shape.name}`, defaultPermission: true, system: null }],
        memberships: [
          { group: 'home', defaultPermission: true, owned: true },
          { group: 'users', defaultPermission: true, owned: true },
        ],
        origin: w.origin,
        audit: [w.event],
        verified: w.verified,
        name: shape.name,
      },
      `${w.way}: the same shape`,
    );
  }
});

/** The calls of `fn` in src/ (its file's path beside each), the store's own definitions left out. */
function callersOf(fn: string): string[] {
  const root = path.join(__dirname, '..', '..', 'src');
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !full.includes(`${path.sep}store${path.sep}`)) {
        if (new RegExp(`\\b${fn}\\(`).test(fs.readFileSync(full, 'utf8'))) found.add(path.relative(root, full));
      }
    }
  };
  walk(root);
  return [...found].sort();
}

t.test('an account, a home group, a membership and a nesting each have one home in src/', async (t) => {
  t.same(callersOf('insertAccount'), ['accounts/make.ts'], 'only the maker inserts an account');
  t.same(callersOf('insertGroup'), ['accounts/make.ts', 'groups/manage.ts'], 'a home group by the maker, every other group by the groups domain');
  // administrators.ts: who administers (the first one, promote, demote); invitations: the groups an
  // administrator chose when inviting, joined as the account is made.
  t.same(
    callersOf('addMembership'),
    ['accounts/administrators.ts', 'accounts/make.ts', 'groups/members.ts', 'invitations/invitations.ts'],
    'memberships: the maker, the groups domain, administration',
  );
  t.same(callersOf('removeMembership'), ['accounts/administrators.ts', 'groups/members.ts']);
  t.same(callersOf('addNesting'), ['groups/nesting.ts'], 'nesting: the groups domain only');
  t.same(callersOf('removeNestings'), ['groups/nesting.ts']);
});

t.test('an account made is an account audited, or neither', async (t) => {
  // An outside retest filled the disk: signups answered 200 and their accounts exist, but their
  // audit rows (written after the commit) were lost. Now they are written in the same transaction.
  const s = await startTestServer(t);
  t.equal((await s.signup('first@example.com')).status, 200, 'the first account, audited');
  if (TEST_STORE === 'postgres') {
    await s.db.raw(`CREATE FUNCTION refuse_audit() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'no room for audit rows'; END $$ LANGUAGE plpgsql`);
    await s.db.raw('CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_event FOR EACH ROW EXECUTE FUNCTION refuse_audit()');
  } else {
    await s.db.raw("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_event BEGIN SELECT RAISE(ABORT, 'no room for audit rows'); END");
  }
  const res = await s.signup('second@example.com');
  t.not(res.status, 200, `the signup is refused (${res.status})`);
  t.equal(await s.db('user_account').where({ email_key: 'second@example.com' }).first(), undefined, 'and no account without its audit row');
  t.equal(Number((await s.db('audit_event').where({ event: 'signup' }).count({ n: '*' }).first())?.n), 1, 'the audit holds the one signup that was made');
});
