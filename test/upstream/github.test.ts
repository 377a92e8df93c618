// Sign in with GitHub (and a plain OAuth 2.0 provider), end to end: a stand-in of GitHub's
// documented endpoints (test/helpers/github.ts), this server, Chromium. A new person signs in
// (their teams become groups, and change at the next sign-in); no verified address and no
// membership of the organisation are refused with why; an address that matches an existing
// account does not link; a GitHub sign-in is one factor and not enough to add a way in; the
// `oauth2` kind signs in through the same stand-in's /user.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { startGithub, type GithubStandIn } from '../helpers/github';
import { PASSWORD, startTestServer } from '../helpers/server';

const groupsOf = async (s: { dataDir: string }, group: string) =>
  ((await cli(s.dataDir, ['--json', 'group', 'show', group])).json.members as Array<{ email: string }>).map((m) => m.email).sort();

async function continueWith(page: Page, base: string, display: string) {
  await page.goto(`${base}/signin`);
  await page.getByRole('button', { name: `Continue with ${display}` }).click();
  await page.waitForURL((u) => u.origin === base && u.pathname !== '/signin');
}

t.test('GitHub: sign in, teams to groups, the organisation gate, no verified address, linking, recent sign-in; and --kind oauth2', async (t) => {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const gh: GithubStandIn = await startGithub(t, { callback: `${base}/signin/provider/` });
  const s = await startTestServer(t, { port, publicUrl: base });
  await s.signup('admin@example.com');
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'on'])).code, 0);
  for (const g of ['developers', 'operations']) t.equal((await cli(s.dataDir, ['group', 'create', g])).code, 0);
  const secretFile = path.join(s.dataDir, 'github-secret');
  fs.writeFileSync(secretFile, `${gh.clientSecret}\n`);

  // A team mapped to a group that does not exist: refused, naming it.
  const noGroup = await cli(s.dataDir, [
    'provider',
    'add',
    '--kind',
    'github',
    '--name',
    'github',
    '--client-id',
    gh.clientId,
    '--client-secret-file',
    secretFile,
    '--team-group',
    'acme/engineering=nobody',
    '--url',
    gh.url,
    '--api-url',
    gh.api,
  ]);
  t.equal(noGroup.code, 2, 'refused');
  t.match(noGroup.err, /no managed group named nobody/);
  const added = await cli(s.dataDir, [
    '--json',
    'provider',
    'add',
    '--kind',
    'github',
    '--name',
    'github',
    '--client-id',
    gh.clientId,
    '--client-secret-file',
    secretFile,
    '--allowed-org',
    'acme',
    '--team-group',
    'acme/engineering=developers',
    '--team-group',
    'ACME/SRE=operations',
    '--url',
    gh.url,
    '--api-url',
    gh.api,
  ]);
  t.equal(added.code, 0, added.err);
  t.equal(added.json.redirect_uri, `${base}/signin/provider/github/callback`, 'the callback to register');
  t.equal(added.json.display_name, 'GitHub');
  t.same(added.json.scopes, ['read:user', 'user:email', 'read:org']);
  t.same(added.json.settings, {
    api_url: gh.api,
    allowed_org: 'acme',
    team_groups: [
      { org: 'acme', team: 'engineering', group: 'developers' },
      { org: 'acme', team: 'sre', group: 'operations' },
    ],
  });
  const shown = await cli(s.dataDir, ['provider', 'show', 'github']);
  t.match(shown.out, /team groups:\s+acme\/engineering=developers, acme\/sre=operations/);
  t.notMatch(shown.out, new RegExp(gh.clientSecret), 'never the secret');

  gh.users.set('octo', {
    id: 583231,
    login: 'octo',
    name: 'Octo Cat',
    emails: [
      { email: 'octo@users.noreply.github.com', primary: false, verified: true },
      { email: 'octo@example.com', primary: true, verified: true },
    ],
    orgs: [{ login: 'Acme', public: false }],
    teams: [{ org: 'Acme', slug: 'engineering' }],
  });
  const browser: Browser = await launch(t);
  const fresh = async () => (await browser.newContext()).newPage();

  // A new person: the account is made with the primary verified address, linked by the numeric id, in engineering's group.
  gh.signedIn = 'octo';
  const octo = await fresh();
  await continueWith(octo, base, 'GitHub');
  t.equal(new URL(octo.url()).pathname, '/account', 'signed in');
  t.match(await octo.locator('dl').textContent(), /octo@example\.com/, 'the primary verified address');
  await screenshots(octo, 'github-account');
  const identity = await s.db('linked_identity').first();
  t.equal(identity.subject, '583231', "GitHub's numeric id is the subject");
  t.same(await groupsOf(s, 'developers'), ['octo@example.com'], 'engineering -> developers');
  t.same(await groupsOf(s, 'operations'), [], 'not in sre');
  const session = await s.db('session').orderBy('id', 'desc').first();
  t.equal(session.method, 'provider');
  t.notOk(session.two_factor, 'one factor');
  t.equal(session.upstream_amr ?? '[]', '[]', 'no amr of the provider kept (it sent none)');

  // GitHub's documented forms: the token asked for JSON; the API calls carry its media type, version, a User-Agent and a Bearer token.
  const token = gh.requests.find((r) => r.path === '/login/oauth/access_token')!;
  t.match(token.headers.accept, /application\/json/);
  const calls = gh.requests.filter((r) => r.path.startsWith('/api/v3/'));
  t.same([...new Set(calls.map((r) => r.path))].sort(), ['/api/v3/user', '/api/v3/user/emails', '/api/v3/user/orgs', '/api/v3/user/teams']);
  for (const r of calls) {
    t.equal(r.headers.accept, 'application/vnd.github+json', `${r.path}: Accept`);
    t.equal(r.headers['x-github-api-version'], '2022-11-28', `${r.path}: the API version`);
    t.match(r.headers.authorization, /^Bearer gho_/, `${r.path}: Bearer`);
    t.ok(r.headers['user-agent'], `${r.path}: a User-Agent`);
  }
  const authorize = gh.requests.find((r) => r.path === '/login/oauth/authorize')!.query;
  t.equal(authorize.get('scope'), 'read:user user:email read:org', 'the scopes');
  t.equal(authorize.get('code_challenge_method'), 'S256', 'PKCE');
  t.match(authorize.get('state'), /^[\w-]{20,}$/, 'a state');
  t.equal(authorize.get('redirect_uri'), `${base}/signin/provider/github/callback`);

  // The teams change on GitHub: at the next sign-in the groups follow (left engineering, joined sre).
  gh.users.get('octo')!.teams = [{ org: 'acme', slug: 'sre' }];
  const octo2 = await fresh();
  await continueWith(octo2, base, 'GitHub');
  t.equal(new URL(octo2.url()).pathname, '/account');
  t.same(await groupsOf(s, 'developers'), [], 'left developers');
  t.same(await groupsOf(s, 'operations'), ['octo@example.com'], 'joined operations');
  t.ok(await s.db('audit_event').where({ event: 'group_member_removed' }).first(), 'audited');
  // Octo has nothing else to ask (no password, passkey or TOTP): a fresh GitHub sign-in may add a way in.
  t.ok(await octo2.getByRole('button', { name: 'Make an API key' }).count(), 'the API key form is offered');

  // No verified primary address: refused, saying why; no account made.
  gh.users.set('nomail', {
    id: 9001,
    login: 'nomail',
    name: null,
    emails: [{ email: 'nomail@example.com', primary: true, verified: false }],
    orgs: [{ login: 'acme', public: true }],
    teams: [],
  });
  gh.signedIn = 'nomail';
  const nomail = await fresh();
  await continueWith(nomail, base, 'GitHub');
  t.match(await nomail.getByRole('alert').textContent(), /no verified primary email address/);
  await screenshots(nomail, 'github-no-verified-email');
  t.notOk(await s.db('user_account').where({ email_key: 'nomail@example.com' }).first(), 'no account');
  t.ok(await s.db('audit_event').where({ event: 'signin_failed' }).whereLike('details', '%no_verified_email%').first(), 'audited with its reason');

  // Not a member of acme: refused, saying why.
  gh.users.set('stranger', {
    id: 9002,
    login: 'stranger',
    name: 'Stranger',
    emails: [{ email: 'stranger@example.com', primary: true, verified: true }],
    orgs: [{ login: 'other', public: true }],
    teams: [],
  });
  gh.signedIn = 'stranger';
  const stranger = await fresh();
  await continueWith(stranger, base, 'GitHub');
  t.match(await stranger.getByRole('alert').textContent(), /Only members of the GitHub organization acme sign in here/);
  await screenshots(stranger, 'github-not-in-org');
  t.notOk(await s.db('user_account').where({ email_key: 'stranger@example.com' }).first(), 'no account');

  // Bob has an account here with his password; his GitHub address is the same: no link by email.
  await cli(s.dataDir, ['user', 'create', '--email', 'bob@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  await s.db('user_account').where({ email_key: 'bob@example.com' }).update({ email_verified: true });
  gh.users.set('bob', {
    id: 9003,
    login: 'bob',
    name: 'Bob',
    emails: [{ email: 'Bob@Example.com', primary: true, verified: true }],
    orgs: [{ login: 'acme', public: false }],
    teams: [{ org: 'acme', slug: 'engineering' }],
  });
  gh.signedIn = 'bob';
  const bob = await fresh();
  await continueWith(bob, base, 'GitHub');
  t.match(await bob.getByRole('alert').textContent(), /An account with this email address exists here\. Sign in to it first/);
  t.equal(Number((await s.db('linked_identity').count({ n: '*' }).first())?.n), 1, 'nothing linked');
  t.same(await groupsOf(s, 'developers'), [], 'and no group joined');
  // He signs in with his password and links GitHub from his account page.
  await bob.goto(`${base}/signin`);
  await fillSignin(bob, 'bob@example.com');
  await bob.waitForURL(/\/account/);
  await bob.getByRole('button', { name: 'Link GitHub' }).click();
  await bob.waitForURL(/done=linked/);
  t.equal(Number((await s.db('linked_identity').count({ n: '*' }).first())?.n), 2, 'linked from the account page');

  // Bob signs in with GitHub alone: in, his team's group joined, but a GitHub sign-in is not enough to add a way in.
  const bob2 = await fresh();
  await continueWith(bob2, base, 'GitHub');
  t.equal(new URL(bob2.url()).pathname, '/account');
  t.same(await groupsOf(s, 'developers'), ['bob@example.com']);
  t.equal(await bob2.getByRole('button', { name: 'Make an API key' }).count(), 0, 'no API key form');
  t.ok(await bob2.getByRole('link', { name: 'Confirm it is you to make an API key' }).count(), 'asked to confirm it is him first');

  // --kind oauth2 against the same stand-in: /user's id, email and name; its address is not vouched for.
  const generic = await cli(s.dataDir, [
    '--json',
    'provider',
    'add',
    '--kind',
    'oauth2',
    '--name',
    'forge',
    '--display-name',
    'Forge',
    '--client-id',
    gh.clientId,
    '--client-secret-file',
    secretFile,
    '--authorization-url',
    `${gh.url}/login/oauth/authorize`,
    '--token-url',
    `${gh.url}/login/oauth/access_token`,
    '--userinfo-url',
    `${gh.api}/user`,
    '--scope',
    'read:user',
  ]);
  t.equal(generic.code, 0, generic.err);
  t.same(generic.json.settings, {
    authorization_url: `${gh.url}/login/oauth/authorize`,
    token_url: `${gh.url}/login/oauth/access_token`,
    userinfo_url: `${gh.api}/user`,
    id_field: 'id',
    email_field: 'email',
    email_verified_field: null,
    name_field: 'name',
  });
  gh.users.set('newbie', { id: 777, login: 'newbie', name: 'New Bie', publicEmail: 'newbie@example.com', emails: [], orgs: [], teams: [] });
  gh.signedIn = 'newbie';
  const newbie = await fresh();
  await continueWith(newbie, base, 'Forge');
  t.equal(new URL(newbie.url()).pathname, '/account', 'signed in through the oauth2 kind');
  const made = await s.db('user_account').where({ email_key: 'newbie@example.com' }).first();
  t.equal(made.name, 'New Bie');
  t.notOk(made.email_verified, 'the address is not taken as verified');
  t.ok(await s.db('linked_identity').where({ subject: '777', account_id: made.id }).first(), 'linked by the id field');
  // The same person's GitHub public address matching Bob's account: refused as any provider's.
  gh.users.set('bob2', { id: 778, login: 'bob2', name: null, publicEmail: 'bob@example.com', emails: [], orgs: [], teams: [] });
  gh.signedIn = 'bob2';
  const bob3 = await fresh();
  await continueWith(bob3, base, 'Forge');
  t.match(await bob3.getByRole('alert').textContent(), /Sign in to it first/);
  const list = await cli(s.dataDir, ['provider', 'list']);
  t.match(list.out, /forge\s+oauth2\s+Forge/);
  t.match(list.out, /github\s+github\s+GitHub/);
});
