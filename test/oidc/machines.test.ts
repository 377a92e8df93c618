// Client credentials (machine to machine): a client registered with --credentials gets JWT access
// tokens (RFC 9068) for its audience, verified by resource servers nobody here wrote: `jose`
// against the JWKS, and Apache httpd's mod_oauth2 configured with docs/oidc.md's block, which lets
// the machine in and keeps out a person's token and another audience's.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import * as jose from 'jose';
import { cli } from '../helpers/cli';
import { freePort } from '../helpers/browser';
import { startApache } from '../helpers/proxies';
import { countRows } from '../helpers/server';
import { providerWith } from '../helpers/oidc';

const API = 'https://api.example.com';
const DOC = path.join(__dirname, '..', '..', 'docs', 'oidc.md');

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function tokenRequest(base: string, form: Record<string, string>, auth?: string) {
  const r = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(form),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

t.test('client credentials: an at+jwt for the audience, verified by jose, not a person on the API', async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  const base = s.config.publicUrl;
  const added = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'backup-job', '--credentials', '--audience', API]);
  t.equal(added.code, 0, added.err);
  const job = added.json as { client_id: string; client_secret: string; grants: string[]; audience: string; redirect_uris: string[] };
  t.same(job.grants, ['client_credentials']);
  t.equal(job.audience, API);
  t.same(job.redirect_uris, [], 'no browser sign-in');

  const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.ok((discovery.grant_types_supported as string[]).includes('client_credentials'), 'discovery names the grant');

  const got = await tokenRequest(base, { grant_type: 'client_credentials' }, basic(job.client_id, job.client_secret));
  t.equal(got.status, 200, JSON.stringify(got.body));
  t.equal(got.body.token_type, 'Bearer');
  t.equal(got.body.expires_in, 600);
  const token = String(got.body.access_token);

  // jose checks signature, typ, issuer and audience from the JWKS, as any resource server would.
  const jwks = jose.createRemoteJWKSet(new URL(String(discovery.jwks_uri)));
  const { payload, protectedHeader } = await jose.jwtVerify(token, jwks, { issuer: base, audience: API, typ: 'at+jwt' });
  t.equal(protectedHeader.typ, 'at+jwt');
  t.equal(payload.sub, job.client_id, 'sub is the client');
  t.equal(payload.client_id, job.client_id);
  t.equal(payload.aud, API);
  t.type(payload.jti, 'string');
  t.equal(Number(payload.exp) - Number(payload.iat), 600);
  await t.rejects(jose.jwtVerify(token, jwks, { issuer: base, audience: 'https://other.example.com' }), 'another audience refuses it');

  // Not a person: Gatehouse's own API refuses it.
  const me = await s.call('GET', '/api/user_account', { token });
  t.equal(me.status, 401, 'a client-credentials token on the HTTP API: 401');
  t.equal((await s.action('user_account', 'signout', {}, token)).status, 401, 'and on the actions');

  // The same client asking for another resource, a wrong secret, a client without the grant,
  // an unknown grant type: clear refusals, and nothing stored.
  const payloads = await countRows(s, 'oidc_payload');
  const other = await tokenRequest(base, { grant_type: 'client_credentials', resource: 'https://other.example.com' }, basic(job.client_id, job.client_secret));
  t.equal(other.status, 400);
  t.equal(other.body.error, 'invalid_target');
  const wrong = await tokenRequest(base, { grant_type: 'client_credentials' }, basic(job.client_id, `${job.client_secret.slice(0, -1)}x`));
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error, 'invalid_client');
  const wiki = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.com/cb'])).json;
  t.same(wiki.grants, ['authorization_code']);
  t.equal(wiki.audience, null);
  const notAllowed = await tokenRequest(base, { grant_type: 'client_credentials' }, basic(wiki.client_id, wiki.client_secret));
  t.equal(notAllowed.status, 400);
  // oidc-provider words it invalid_request (RFC 6749 would say unauthorized_client).
  t.equal(notAllowed.body.error, 'invalid_request', 'a browser-sign-in client may not act as itself');
  t.match(String(notAllowed.body.error_description), /grant type is not allowed for this client/);
  const unknown = await tokenRequest(base, { grant_type: 'password', username: 'ada@example.com', password: 'x' }, basic(job.client_id, job.client_secret));
  t.equal(unknown.status, 400);
  t.equal(unknown.body.error, 'unsupported_grant_type');
  t.equal(await countRows(s, 'oidc_payload'), payloads, 'no refusal stored anything');

  // Without --audience the token is for the client itself (an audience must be a URI: a URN of its id).
  const plain = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'cron', '--credentials'])).json;
  t.equal(plain.audience, `urn:gatehouse:client:${plain.client_id}`);
  const own = await tokenRequest(base, { grant_type: 'client_credentials' }, basic(plain.client_id, plain.client_secret));
  t.equal((await jose.jwtVerify(String(own.body.access_token), jwks, { audience: plain.audience })).payload.sub, plain.client_id);

  // The shell names the grants; a removed client gets nothing more.
  const listed = await cli(s.dataDir, ['client', 'list']);
  t.match(listed.out, /backup-job\s+confidential\s+client credentials/);
  t.match((await cli(s.dataDir, ['client', 'show', job.client_id])).out, new RegExp(`audience:\\s+${API.replace(/\./g, '\\.')}`));
  await cli(s.dataDir, ['client', 'remove', job.client_id]);
  t.equal((await tokenRequest(base, { grant_type: 'client_credentials' }, basic(job.client_id, job.client_secret))).status, 401);
});

t.test('client add refuses what cannot work, and stores nothing', async (t) => {
  const s = await providerWith(t);
  const refusals: Array<[string[], RegExp]> = [
    [['--name', 'x'], /give at least one --redirect-uri, or --device, or --credentials/],
    [['--name', 'x', '--credentials', '--public'], /--credentials needs a secret/],
    [['--name', 'x', '--device', '--audience', API], /--audience is for --credentials clients/],
    [['--name', 'x', '--credentials', '--audience', 'not a uri'], /--audience must be an absolute URI/],
    [['--name', 'x', '--credentials', '--audience', `${API}/#frag`], /must not have a #fragment/],
    [['--name', 'x', '--credentials', '--audience', s.config.publicUrl], /must not be Gatehouse's own URL/],
    [['--name', 'x', '--device', '--post-logout-redirect-uri', 'https://a.example.com/'], /needs --redirect-uri/],
  ];
  for (const [args, message] of refusals) {
    const r = await cli(s.dataDir, ['client', 'add', ...args]);
    t.not(r.code, 0, args.join(' '));
    t.match(r.err, message, args.join(' '));
  }
  t.equal(await countRows(s, 'oidc_client'), 0, 'no client was stored');
});

function apacheBlock(): string {
  const m = /<!-- apache-oauth2:[^\n]*-->\n```apache\n([\s\S]*?)\n```/.exec(fs.readFileSync(DOC, 'utf8'));
  if (!m) throw new Error('docs/oidc.md has no apache-oauth2 block');
  return m[1];
}

t.test("Apache's mod_oauth2 lets the machine in and keeps a person's token out", async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  const base = s.config.publicUrl;
  const job = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'backup-job', '--credentials', '--audience', API])).json;
  const other = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'reports', '--credentials', '--audience', 'https://reports.example.com'])).json;
  const web = await freePort();
  // The doc's block, with this test's Gatehouse address; the module is loaded by startApache.
  const block = apacheBlock()
    .replace(/^LoadModule oauth2_module .*\n/m, '')
    .replace('http://127.0.0.1:8080', base);
  const dir = await startApache(t, web, ['oauth2'], () => block);
  fs.mkdirSync(path.join(dir, 'www', 'api'), { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'www', 'api', 'backup.txt'), 'the backup API\n', { mode: 0o644 });

  const get = async (token?: string) => {
    const r = await fetch(`http://127.0.0.1:${web}/api/backup.txt`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    return { status: r.status, text: await r.text() };
  };
  const tokenOf = async (c: { client_id: string; client_secret: string }) =>
    String((await tokenRequest(base, { grant_type: 'client_credentials' }, basic(c.client_id, c.client_secret))).body.access_token);

  const machine = await get(await tokenOf(job));
  t.equal(machine.status, 200, 'the machine gets in');
  t.equal(machine.text, 'the backup API\n');
  t.equal((await get()).status, 401, 'no token: 401');
  const person = await s.signin('ada@example.com');
  t.ok([401, 403].includes((await get(person)).status), "a person's Gatehouse token (aud: Gatehouse itself) is refused");
  t.ok([401, 403].includes((await get(await tokenOf(other))).status), "another audience's token is refused");
  const forged = (await tokenOf(job)).replace(/\.[^.]+$/, '.AAAA');
  t.ok([401, 403].includes((await get(forged)).status), 'a token with a broken signature is refused');
});
