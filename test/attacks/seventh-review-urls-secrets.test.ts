// Issue 71, findings 2 and 3 of an outside review. 2: a user and password in an address Gatehouse
// sends requests to (a back-channel logout URI above all, which `client show` and `config export`
// printed back) is refused by one rule wherever such an address is given (the shell, the console,
// a configuration file through plan, apply and serve --config); one stored by an earlier version
// is shown and exported without its password; a loopback address is refused naming the real flag
// and environment variable. 3: a name that comes from input is looked up only among a table's own
// keys: a secret reference `{env: constructor}` is "not set" at its line and column, and so are the
// flags, query parameters, scopes, import fields and provider names that reached a plain object.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { cli } from '../helpers/cli';
import { countRows, PASSWORD, setSignup, startTestServer, storeFlags, tempDir, type TestServer, withAdmin } from '../helpers/server';
import { startHostileUpstream } from '../helpers/hostile-upstream';

const SECRET = 's3cr3t';
const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
/** The line and column (1-based) where `needle` first begins in `text`. */
const posOf = (text: string, needle: string) => {
  const before = text.slice(0, text.indexOf(needle)).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
};
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A browser-like client on the pages: a cookie jar, the CSRF cookie, form posts, redirects by hand. */
async function browserOf(s: TestServer, email: string | null) {
  const jar = new Map<string, string>();
  const go = async (where: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const url = where.startsWith('http') ? where : s.url + where;
    const own = url.startsWith(s.url) || url.startsWith(s.config.publicUrl);
    const res = await fetch(url.replace(s.config.publicUrl, s.url), {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(own ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  };
  const post = (where: string, fields: Record<string, string>) =>
    go(where, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ csrf: jar.get('gatehouse_csrf') ?? '', ...fields }).toString(),
    });
  await go('/signin');
  if (email !== null) {
    const signedIn = await post('/signin', { email, password: PASSWORD });
    if (signedIn.status !== 303) throw new Error(`signin: ${signedIn.status}`);
  }
  return { go, post };
}

/**
 * `serve --config FILE` on a fresh store, told to listen on a port that is taken: a file it
 * refuses stops the start before it listens; one it accepted would end at the port instead (an
 * answer either way, never a server left running).
 */
async function serveWith(t: Test, file: string) {
  const busy = net.createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => busy.close(() => resolve())));
  const dir = tempDir(t);
  await storeFlags(t, dir);
  return cli(dir, ['serve', '--host', '127.0.0.1', '--port', String((busy.address() as net.AddressInfo).port), '--config', file]);
}

const CLIENT_FILE = (uri: string) => `version: 1
oidc_clients:
  - client_id: wiki
    name: Wiki
    public: true
    redirect_uris: [https://wiki.example.invalid/cb]
    backchannel_logout_uri: ${uri}
`;

t.test('a user and password in a back-channel logout URI: refused by the shell, the console, plan, apply and serve --config; nothing stored', async (t) => {
  const s = await withAdmin(t);
  const uri = `https://gh:${SECRET}@wiki.example.invalid/bc`;
  const said: RegExp = /--backchannel-logout-uri must carry no user or password/;

  const add = await cli(s.dataDir, ['client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.invalid/cb', '--backchannel-logout-uri', uri]);
  t.equal(add.code, 2, 'client add: refused as bad input');
  t.match(add.err, said);
  t.notMatch(add.err, SECRET, 'the refusal does not echo the password');
  t.equal(await countRows(s, 'oidc_client'), 0, 'nothing stored');

  const made = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.invalid/cb']);
  t.equal(made.code, 0, made.err);
  const set = await cli(s.dataDir, ['client', 'set', made.json.client_id, '--backchannel-logout-uri', uri]);
  t.equal(set.code, 2, 'client set: refused');
  t.match(set.err, said);
  t.equal((await cli(s.dataDir, ['--json', 'client', 'show', made.json.client_id])).json.backchannel_logout_uri, null, 'nothing stored');

  // The console: its form's label names the field.
  const admin = await browserOf(s, 'admin@example.com');
  const form = await admin.post('/admin/clients', { name: 'Console app', redirect_uris: 'https://app.example.invalid/cb', backchannel_logout_uri: uri });
  t.equal(form.status, 400, 'the console: refused');
  t.match(form.text, /“Back-channel logout URI” must carry no user or password/);
  t.equal(await countRows(s, 'oidc_client'), 1, 'nothing stored');

  // A configuration file: at the key's line and column, through plan, apply and serve --config.
  const dir = tempDir(t);
  const text = CLIENT_FILE(uri);
  const file = write(dir, 'gatehouse.yaml', text);
  const at = new RegExp(`gatehouse\\.yaml:${posOf(text, 'https://gh:')}: backchannel_logout_uri must carry no user or password`);
  for (const command of ['plan', 'apply']) {
    const r = await cli(s.dataDir, ['config', command, file]);
    t.not(r.code, 0, `config ${command}: refused`);
    t.match(r.err, at, `config ${command}: at the line and column`);
    t.notMatch(r.err, SECRET);
  }
  t.equal(await countRows(s, 'oidc_client'), 1, 'nothing stored');
  const served = await serveWith(t, file);
  t.not(served.code, 0, 'serve --config: the start stops');
  t.match(served.err, at);
});

t.test('every other address Gatehouse sends to follows the same rule: webhooks, SCIM targets, issuers, directory sources, SP metadata', async (t) => {
  const s = await withAdmin(t);
  const env = { S: 'a-client-secret-0123456789', BIND: 'bind-password' };
  const cases: Array<[string, string[], RegExp, string?]> = [
    ['webhook add', ['webhook', 'add', '--url', `https://u:${SECRET}@hooks.example.invalid/x`], /--url must carry no user or password/],
    [
      'scim target add',
      ['scim', 'target', 'add', '--url', `https://u:${SECRET}@app.example.invalid/scim/v2`, '--token-stdin', '--name', 'app'],
      /--url must carry no user or password/,
      'token-1\n',
    ],
    [
      'provider add',
      ['provider', 'add', '--name', 'corp', '--issuer', `https://u:${SECRET}@issuer.example.invalid`, '--client-id', 'x', '--client-secret-env', 'S'],
      /--issuer must carry no user or password/,
    ],
    [
      'source add',
      [
        'source',
        'add',
        'ldap',
        '--name',
        'corp',
        '--url',
        `ldaps://cn=admin:${SECRET}@ldap.example.invalid`,
        '--bind-dn',
        'cn=reader,dc=example,dc=org',
        '--bind-password-env',
        'BIND',
        '--base-dn',
        'dc=example,dc=org',
      ],
      /--url must carry no user or password/,
    ],
    ['saml sp add', ['saml', 'sp', 'add', '--metadata', `https://u:${SECRET}@sp.example.invalid/metadata`], /--metadata must carry no user or password/],
  ];
  for (const [name, args, said, stdin] of cases) {
    const r = await cli(s.dataDir, args, { env, stdin });
    t.equal(r.code, 2, `${name}: refused as bad input`);
    t.match(r.err, said, name);
    t.notMatch(r.err, SECRET, `${name}: the password is not echoed`);
  }
  for (const table of ['webhook', 'scim_target', 'upstream_provider', 'directory_source', 'saml_sp']) t.equal(await countRows(s, table), 0, `no ${table}`);

  // The same in a configuration file, each at its URL's line and column.
  const dir = tempDir(t);
  const fileEnv = { HOOK: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, TOKEN: 'scim-token', S: env.S };
  const files: Array<[string, string, RegExp]> = [
    ['webhooks', `version: 1\nwebhooks:\n  - url: https://u:${SECRET}@h.example.invalid/x\n    secret: {env: HOOK}\n`, /url must carry no user or password/],
    [
      'scim_targets',
      `version: 1\nscim_targets:\n  - name: app\n    url: https://u:${SECRET}@app.example.invalid/scim/v2\n    token: {env: TOKEN}\n`,
      /url must carry no user or password/,
    ],
    [
      'providers',
      `version: 1\nproviders:\n  - name: corp\n    issuer: https://u:${SECRET}@issuer.example.invalid\n    client_id: x\n    client_secret: {env: S}\n`,
      /issuer must carry no user or password/,
    ],
  ];
  for (const [kind, text, said] of files) {
    const file = write(dir, `${kind}.yaml`, text);
    const r = await cli(s.dataDir, ['config', 'apply', file], { env: fileEnv });
    t.equal(r.code, 2, `${kind}: refused`);
    t.match(r.err, new RegExp(`${kind}\\.yaml:${posOf(text, 'https://u:')}: ${said.source}`), `${kind}: at the URL's line and column`);
    t.notMatch(r.err, SECRET);
  }
  for (const table of ['webhook', 'scim_target', 'upstream_provider']) t.equal(await countRows(s, table), 0, `still no ${table}`);
});

t.test('a back-channel URI an earlier version stored with a password: shown and exported without it; the export is refused until it is set anew', async (t) => {
  const s = await withAdmin(t);
  const made = await cli(s.dataDir, [
    '--json',
    'client',
    'add',
    '--name',
    'Wiki',
    '--redirect-uri',
    'https://wiki.example.invalid/cb',
    '--backchannel-logout-uri',
    'https://wiki.example.invalid/bc',
  ]);
  t.equal(made.code, 0, made.err);
  const id: string = made.json.client_id;
  // What an earlier version let through, written as it would have stored it.
  const row = await s.db('oidc_client').where({ client_id: id }).first();
  const metadata = { ...JSON.parse(row.metadata), backchannel_logout_uri: `https://gh:${SECRET}@wiki.example.invalid/bc` };
  await s
    .db('oidc_client')
    .where({ client_id: id })
    .update({ metadata: JSON.stringify(metadata) });

  const shown = await cli(s.dataDir, ['client', 'show', id]);
  t.equal(shown.code, 0, shown.err);
  t.match(shown.out, /back-channel logout:\s+https:\/\/\*\*\*@wiki\.example\.invalid\/bc/, 'shown with *** for the user and password');
  const outputs = [
    shown.out,
    (await cli(s.dataDir, ['--json', 'client', 'show', id])).out,
    (await cli(s.dataDir, ['--json', 'client', 'list'])).out,
    (await cli(s.dataDir, ['client', 'list'])).out,
    (await (await browserOf(s, 'admin@example.com')).go('/admin/clients')).text,
  ];
  for (const out of outputs) t.notMatch(out, SECRET, 'no password in client show, list or the console');
  t.equal(JSON.parse(outputs[1]).backchannel_logout_uri, 'https://***@wiki.example.invalid/bc');

  const exported = await cli(s.dataDir, ['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  t.notMatch(exported.out, SECRET, 'config export writes no password');
  t.match(exported.out, /backchannel_logout_uri: https:\/\/\*\*\*@wiki\.example\.invalid\/bc/);
  // Applied back, the file says what to fix, at its line; nothing changes.
  const dir = tempDir(t);
  const file = write(dir, 'export.yaml', exported.out);
  const env = { [`GATEHOUSE_CLIENT_SECRET_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`]: 'x'.repeat(40) };
  const applied = await cli(s.dataDir, ['config', 'apply', file], { env });
  t.equal(applied.code, 2);
  t.match(applied.err, new RegExp(`export\\.yaml:${posOf(exported.out, 'https://***@')}: backchannel_logout_uri must carry no user or password`));
  t.equal(JSON.parse((await s.db('oidc_client').where({ client_id: id }).first()).metadata).backchannel_logout_uri, metadata.backchannel_logout_uri);
  // Set anew, it is shown as it is.
  const reset = await cli(s.dataDir, ['--json', 'client', 'set', id, '--backchannel-logout-uri', 'https://wiki.example.invalid/bc']);
  t.equal(reset.code, 0, reset.err);
  t.equal(reset.json.backchannel_logout_uri, 'https://wiki.example.invalid/bc');
});

t.test('an address inside the network is refused naming the real flag and variable, in the shell, a file and the console', async (t) => {
  const s = await withAdmin(t);
  const allow = /\(--webhook-allow-private loopback, or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=loopback\)/;
  const shell = await cli(s.dataDir, [
    'client',
    'add',
    '--name',
    'W',
    '--redirect-uri',
    'https://w.example.invalid/cb',
    '--backchannel-logout-uri',
    'http://127.0.0.1:9/bc',
  ]);
  t.equal(shell.code, 2);
  t.match(shell.err, /--backchannel-logout-uri is a loopback address/);
  t.match(shell.err, allow);

  const dir = tempDir(t);
  const texts: Array<[string, string]> = [
    ['client', CLIENT_FILE('http://127.0.0.1:9/bc')],
    ['webhook', `version: 1\nwebhooks:\n  - url: http://127.0.0.1:9/x\n    secret: {env: HOOK}\n`],
  ];
  for (const [name, text] of texts) {
    const file = write(dir, `${name}.yaml`, text);
    const r = await cli(s.dataDir, ['config', 'apply', file], { env: { HOOK: `whsec_${Buffer.alloc(32, 7).toString('base64')}` } });
    t.equal(r.code, 2, `${name}: refused`);
    t.match(r.err, new RegExp(`${name}\\.yaml:${posOf(text, 'http://127')}: `), `${name}: at the line`);
    t.match(r.err, allow, `${name}: names the flag and the variable`);
    t.notMatch(r.err, /webhook_allow_private|webhook allow private/, `${name}: no made-up key`);
  }

  const admin = await browserOf(s, 'admin@example.com');
  const form = await admin.post('/admin/clients', {
    name: 'W',
    redirect_uris: 'https://w.example.invalid/cb',
    backchannel_logout_uri: 'http://127.0.0.1:9/bc',
  });
  t.equal(form.status, 400);
  t.match(form.text, allow, 'the console names the flag too');
  t.notMatch(form.text, /webhook allow private/);
});

const BUILT_IN = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'toLocaleString'];

t.test('a secret reference named like a built-in property is "not set" at its line and column (plan, apply, serve --config)', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const hook = (ref: string) => `version: 1\nwebhooks:\n  - url: https://h.example.invalid/x\n    secret: ${ref}\n`;
  const target = (ref: string) => `version: 1\nscim_targets:\n  - name: app\n    url: https://app.example.invalid/scim/v2\n    token: ${ref}\n`;
  const provider = (ref: string) =>
    `version: 1\nproviders:\n  - name: corp\n    issuer: https://issuer.example.invalid\n    client_id: x\n    client_secret: ${ref}\n`;
  for (const name of BUILT_IN) {
    for (const [kind, make] of [
      ['webhook', hook],
      ['target', target],
      ['provider', provider],
    ] as const) {
      const text = make(`{env: ${name}}`);
      const file = write(dir, `${kind}.yaml`, text);
      const where = `${kind}\\.yaml:${posOf(text, '{env:')}`;
      for (const command of ['plan', 'apply']) {
        const r = await cli(s.dataDir, ['config', command, file]);
        t.not(r.code, 0, `${command} {env: ${name}} (${kind}): refused`);
        t.match(r.err, new RegExp(`${where}: the environment variable ${escaped(name)} is not set`), `${command} {env: ${name}} (${kind})`);
        t.notMatch(r.err, /unexpected error|internal/);
      }
    }
    const text = hook(`{file: ${name}}`);
    const r = await cli(s.dataDir, ['config', 'plan', write(dir, 'file.yaml', text)]);
    t.match(r.err, new RegExp(`file\\.yaml:${posOf(text, '{file:')}: cannot read the secret file ${escaped(name)}`), `{file: ${name}}`);
  }
  t.equal(await countRows(s, 'webhook'), 0, 'nothing stored');

  // serve --config reads the process's own environment: the same answer.
  const text = hook('{env: constructor}');
  const served = await serveWith(t, write(dir, 'serve.yaml', text));
  t.not(served.code, 0, 'the start stops');
  t.match(served.err, new RegExp(`serve\\.yaml:${posOf(text, '{env:')}: the environment variable constructor is not set`));
});

t.test('other names from input looked up in a table: flags, query parameters, scopes, an import, a provider name', async (t) => {
  const s = await withAdmin(t);

  // Flags that name an environment variable, and the internal ranges' names.
  const env = { PW: PASSWORD };
  for (const name of ['constructor', 'toString', '__proto__']) {
    const user = await cli(s.dataDir, ['user', 'create', '--email', 'x@example.com', '--name', 'X', '--password-env', name], { env });
    t.equal(user.code, 2, `--password-env ${name}`);
    t.match(user.err, new RegExp(`the environment variable ${escaped(name)} is not set`));
    const provider = await cli(
      s.dataDir,
      ['provider', 'add', '--name', 'corp', '--issuer', 'https://issuer.example.invalid', '--client-id', 'x', '--client-secret-env', name],
      { env },
    );
    t.equal(provider.code, 2, `--client-secret-env ${name}`);
    t.match(provider.err, new RegExp(`the environment variable ${escaped(name)} is not set`));
  }
  for (const name of ['constructor', '__proto__']) {
    const r = await cli(s.dataDir, ['--webhook-allow-private', name, 'webhook', 'list']);
    t.equal(r.code, 2, `--webhook-allow-private ${name}: a usage error`);
    t.match(r.err, new RegExp(`--webhook-allow-private takes loopback, .*got "${escaped(name)}"`));
  }

  // ?done= on the pages names a fixed message; a built-in name names none.
  const guest = await browserOf(s, null);
  const admin = await browserOf(s, 'admin@example.com');
  for (const [who, where] of [
    [guest, '/signin?done=constructor'],
    [admin, '/account?done=toString'],
    [admin, '/admin/accounts?done=constructor'],
    [admin, '/admin/clients?done=valueOf'],
  ] as const) {
    const page = await who.go(where);
    t.equal(page.status, 200, where);
    t.notMatch(page.text, /native code|function Object|\[object Object\]/, `${where}: no built-in shown`);
  }

  // Scopes an app asks for: the consent page lists only the ones it knows.
  const app = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Third party', '--redirect-uri', 'http://localhost:3999/callback', '--public']);
  t.equal(app.code, 0, app.err);
  const params = new URLSearchParams({
    client_id: app.json.client_id,
    response_type: 'code',
    redirect_uri: 'http://localhost:3999/callback',
    scope: 'openid email constructor toString hasOwnProperty',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  let step = await admin.go(`/oidc/auth?${params}`);
  for (let i = 0; i < 10 && step.status >= 300 && step.status < 400 && step.location; i++) step = await admin.go(step.location);
  t.equal(step.status, 200, 'the consent page');
  t.match(step.text, /see your email address/, 'a scope it knows is listed');
  t.notMatch(step.text, /native code|function Object/, 'no built-in listed as a scope');

  // A Keycloak export whose password names a built-in as its algorithm: skipped with the reason.
  const dir = tempDir(t);
  const realm = {
    realm: 'acme',
    users: ['constructor', 'toString', '__proto__'].map((algorithm, i) => ({
      username: `pat${i}`,
      email: `pat${i}@example.com`,
      enabled: true,
      credentials: [
        {
          type: 'password',
          secretData: '{"value":"AAAAAAAAAAAAAAAAAAAAAA==","salt":"AAAA"}',
          credentialData: `{"hashIterations":5,"algorithm":"${algorithm}"}`,
        },
      ],
    })),
  };
  const imported = await cli(s.dataDir, ['--json', 'import', '--from', 'keycloak', write(dir, 'realm.json', JSON.stringify(realm))]);
  t.equal(imported.code, 0, imported.err);
  for (const [i, algorithm] of ['constructor', 'toString', '__proto__'].entries()) {
    const person = imported.json.people.find((p: { email: string }) => p.email === `pat${i}@example.com`);
    t.match(person, { outcome: 'skipped', reason: new RegExp(`${escaped(algorithm)}, which Gatehouse cannot check`) }, `algorithm ${algorithm}`);
  }
});

t.test('a sign-in provider named constructor: its sign-ins are counted as any other', async (t) => {
  const s = await startTestServer(t);
  await s.signup('admin@example.com');
  const adminToken = await s.signin('admin@example.com');
  await setSignup(s, adminToken, 2097057);
  const upstream = await startHostileUpstream(t, 'gatehouse-client');
  upstream.mode = 'good';
  const added = await cli(
    s.dataDir,
    ['provider', 'add', '--name', 'constructor', '--issuer', upstream.issuer, '--client-id', 'gatehouse-client', '--client-secret-env', 'S'],
    { env: { S: 'a-secret' } },
  );
  t.equal(added.code, 0, added.err);
  const b = await browserOf(s, null);
  const started = await b.post('/signin/provider/constructor', {});
  t.equal(started.status, 303, 'off to the provider');
  const back = await b.go(started.location!);
  const landed = await b.go(back.location!);
  t.equal(landed.status, 303, 'signed in through it');
  t.notOk(Object.hasOwn(Object, 'ok'), 'nothing written onto what every object inherits');
  const metrics = await s.call('GET', '/metrics', { token: adminToken });
  t.match(metrics.text, /gatehouse_provider_signins_total\{provider="constructor",outcome="ok"\} 1/);
});
