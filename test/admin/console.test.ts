// Invitations and the administrators' console in Chromium: invite from the CLI and from the
// console (a real SMTP server receives the mail), accept in a fresh browser (with a password, and
// with a passkey through Chromium's virtual authenticator), sign in and appear in the group; a
// spent, an expired and a withdrawn invitation; the administrator opens and closes guest signup,
// adds an OIDC client and signs in to it with openid-client, disables an account and sees its
// sessions end; a non-administrator and a guest get 404. Every console page photographed at 360
// and 1280 px.
import t from 'tap';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { passkeyServer, withAuthenticator } from '../helpers/passkeys';
import { PASSWORD, tokenOf, type TestServer } from '../helpers/server';
import { startSmtp } from '../helpers/smtp';
import { fillSignin, startApp } from '../helpers/oidc';

const linkIn = (text: string) => {
  const m = /(http\S+\/signup\?invite=[A-Za-z0-9_-]{43})/.exec(text);
  if (!m) throw new Error(`no invitation link in: ${text}`);
  return m[1];
};

async function setUp(t: Parameters<typeof passkeyServer>[0]) {
  const smtp = await startSmtp(t);
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, { smtpUrl: smtp.url }, { clock });
  // Guest signup closed again (passkeyServer opened it): invitations are the way in.
  t.equal((await cli(s.dataDir, ['action', 'set-permission', 'signup', '--guest', 'off'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'create', 'editors'])).code, 0);
  const browser = await launch(t);
  return { s, base, smtp, clock, browser };
}

async function adminPage(browser: Browser, base: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  return page;
}

const membersOf = async (s: TestServer, group: string) =>
  ((await cli(s.dataDir, ['--json', 'group', 'show', group])).json.members as Array<{ email: string }>).map((m) => m.email);

t.test('invite from the CLI and from the console; accept with a password and with a passkey; spent, expired, withdrawn', async (t) => {
  const { s, base, smtp, clock, browser } = await setUp(t);

  // From a shell with no environment, into a group: the invitation is queued, and the running
  // server mails it through its SMTP server, the link on its public URL (contract section 17).
  const made = await cli(s.dataDir, ['--json', 'user', 'invite', 'ann@example.com', '--group', 'editors', '--print-link']);
  t.equal(made.code, 0, made.err);
  t.match(made.json.mail, { via: 'smtp', to: `127.0.0.1:${new URL(smtp.url).port}` }, "the server's mail route, as it recorded it");
  t.ok(made.json.link.startsWith(`${s.config.publicUrl}/signup?invite=`), "the link is on the server's public URL");
  const plain = await cli(s.dataDir, ['user', 'invite', 'nomail@example.com']);
  t.notMatch(plain.out, /link:/, 'no link printed unless asked');
  t.match(plain.out, /mail: +queued; the server sends it through the SMTP server 127\.0\.0\.1:/);
  // The shell queued it at the wall clock's time; this server's clock is held: bring it up to then.
  const catchUp = () => clock.set(Math.max(clock.now(), Date.now()) + 1);
  catchUp();
  await cli(s.dataDir, ['user', 'invite-revoke', (await cli(s.dataDir, ['--json', 'user', 'invitations'])).json.invitations[0].id]);
  const listed = await cli(s.dataDir, ['--json', 'user', 'invitations']);
  t.same(
    listed.json.invitations.map((i: { email: string }) => i.email),
    ['ann@example.com'],
  );
  const link = linkIn((await smtp.next('ann@example.com')).text);
  const ann = await (await browser.newContext()).newPage();
  await ann.goto(link);
  t.equal(await ann.locator('#invited-email').textContent(), 'ann@example.com', 'the invited address is shown, not asked');
  await screenshots(ann, 'invitation-signup');
  await ann.getByLabel('Name').fill('Ann');
  await ann.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await ann.getByLabel('Password again').fill(PASSWORD);
  await ann.getByRole('button', { name: 'Create account' }).click();
  await ann.waitForURL(/\/account\?done=welcome/);
  t.match(await ann.locator('dl').textContent(), /Confirmed\s*yes/, 'the link proved the address');
  t.same(await membersOf(s, 'editors'), ['ann@example.com'], 'and she is in the group');

  // The same link again: spent.
  const again = await (await browser.newContext()).newPage();
  const spent = await again.goto(link);
  t.equal(spent?.status(), 410);
  t.match(await again.getByRole('alert').textContent(), /used already/);
  await screenshots(again, 'invitation-used');

  // From the console, accepted with a passkey (the form's email changes nothing: there is none).
  const admin = await adminPage(browser, base);
  await admin.goto(`${base}/admin/invitations`);
  await screenshots(admin, 'admin-invitations');
  await admin.getByLabel('Email').fill('bo@example.com');
  await admin.getByLabel('editors').check();
  await admin.getByRole('button', { name: 'Send the invitation' }).click();
  await admin.locator('#h-invited').waitFor();
  t.match(await admin.locator('table').textContent(), /bo@example\.com/);
  t.match(await admin.locator('#h-invited').textContent(), 'bo@example.com is invited');
  t.match(await admin.locator('section.notice').textContent(), /by the SMTP server 127\.0\.0\.1:\d+/, 'the page says where the mail went');
  const offered = await admin.locator('#invitation-link').inputValue();
  await screenshots(admin, 'admin-invited');
  const bo = await withAuthenticator(browser);
  t.equal(linkIn((await smtp.next('bo@example.com')).text), offered, 'the console offers the mailed link to copy');
  await bo.page.goto(offered);
  await bo.page.getByLabel('Name').fill('Bo');
  await bo.page.getByRole('button', { name: 'Create it with a passkey instead' }).click();
  await bo.page.waitForURL(/\/account\?done=welcome/);
  const boRow = await s.db('user_account').where({ email_key: 'bo@example.com' }).first();
  t.equal(boRow.password, '', 'a passkey-only account');
  t.same((await membersOf(s, 'editors')).sort(), ['ann@example.com', 'bo@example.com']);

  // Withdrawn from the console.
  const withdrawn = await cli(s.dataDir, ['--json', 'user', 'invite', 'cy@example.com']);
  catchUp();
  const cyLink = linkIn((await smtp.next('cy@example.com')).text);
  await admin.goto(`${base}/admin/invitations`);
  await admin.getByRole('button', { name: 'Withdraw the invitation of cy@example.com' }).click();
  await admin.waitForURL(/done=invitation_revoked/);
  const cy = await (await browser.newContext()).newPage();
  await cy.goto(cyLink);
  t.match(await cy.getByRole('alert').textContent(), /withdrawn/);
  await screenshots(cy, 'invitation-withdrawn');
  t.equal((await cli(s.dataDir, ['user', 'invite-revoke', withdrawn.json.invitation.id])).code, 3, 'revoked once only');

  // Expired: a week and a day later.
  await cli(s.dataDir, ['user', 'invite', 'di@example.com', '--expires', '7d']);
  catchUp();
  const diLink = linkIn((await smtp.next('di@example.com')).text);
  clock.advance(8 * 86_400_000);
  await cy.goto(diLink);
  t.match(await cy.getByRole('alert').textContent(), /expired/);
  await screenshots(cy, 'invitation-expired');
  t.equal(await s.db('user_account').where({ email_key: 'di@example.com' }).first(), undefined, 'nothing made');
  t.ok(await s.db('audit_event').where({ event: 'invitation_accepted' }).first(), 'audited');
});

t.test('the console: guest signup, an OIDC client, disabling an account; non-administrators get 404', async (t) => {
  const { s, base, browser, smtp } = await setUp(t);
  void smtp;
  await cli(s.dataDir, ['user', 'create', '--email', 'eve@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const admin = await adminPage(browser, base);

  // Every console page, photographed.
  for (const section of ['accounts', 'groups', 'clients', 'apps', 'signup', 'keys', 'audit']) {
    await admin.goto(`${base}/admin/${section}`);
    t.equal(await admin.locator('nav.console [aria-current="page"]').count(), 1, `${section}: in the navigation`);
    await screenshots(admin, `admin-${section}`);
  }
  // The Role column names a member's role too (it was blank: a bare "Role:" on a phone).
  await admin.goto(`${base}/admin/accounts`);
  const role = (email: string) =>
    admin
      .locator('tbody tr', { has: admin.getByRole('link', { name: email }) })
      .locator('td[data-label="Role"]')
      .textContent();
  t.equal((await role('eve@example.com'))?.trim(), 'member', 'a member: member');
  t.equal((await role('admin@example.com'))?.trim(), 'administrator', 'an administrator: administrator');

  // Guest signup: open it (it asks to confirm), then close it.
  await admin.goto(`${base}/admin/signup`);
  await admin.getByRole('button', { name: 'Open guest signup' }).click();
  t.match(admin.url(), /\/admin\/signup$/, 'the browser asks for the box first');
  await admin.getByLabel('Let anyone on the internet make an account').check();
  await admin.getByRole('button', { name: 'Open guest signup' }).click();
  await admin.waitForURL(/done=signup_opened/);
  t.equal((await s.core.signupStatus()).open, true);
  await admin.getByRole('button', { name: 'Close guest signup' }).click();
  await admin.waitForURL(/done=signup_closed/);
  t.equal((await s.core.signupStatus()).open, false);
  const audit = await s.db('audit_event').where({ event: 'action_permission_changed' }).orderBy('id', 'desc').first();
  if (audit) t.match(JSON.parse(audit.details), {}, 'audited');

  // An OIDC client added on one screen; its secret shown once; openid-client signs in with it.
  const app = await startApp(t);
  await admin.goto(`${base}/admin/clients`);
  await admin.getByLabel('Name', { exact: true }).fill('Wiki');
  await admin.getByLabel('Redirect URIs').fill(app.redirect);
  await admin.getByLabel('First party: no consent page').check();
  await admin.getByRole('button', { name: 'Add client' }).click();
  const secret = (await admin.locator('#client-secret').textContent())!.trim();
  t.equal((await admin.locator('#h-secret').textContent())!.trim(), 'The client secret of Wiki', 'the panel names the client (issue 34, item 10)');
  const clientId = (await admin.locator('#h-secret + p.meta').textContent())!.replace('Client id ', '').trim();
  await screenshots(admin, 'admin-client-secret');
  await admin.goto(`${base}/admin/clients`);
  t.equal(await admin.locator('#client-secret').count(), 0, 'never shown again');
  t.notMatch(await admin.content(), new RegExp(secret), 'not anywhere on the page');
  const config = await oidc.discovery(new URL(s.config.publicUrl), clientId, secret, undefined, { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: app.redirect,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  });
  const eve = await (await browser.newContext()).newPage();
  await eve.goto(url.href);
  await fillSignin(eve, 'eve@example.com');
  await eve.waitForURL((u) => u.pathname === '/callback');
  const tokens = await oidc.authorizationCodeGrant(config, app.last()!, { pkceCodeVerifier: verifier, expectedState: 'st' });
  const eveRef = (await s.db('user_account').where({ email_key: 'eve@example.com' }).first()).reference_id;
  t.equal(tokens.claims()?.sub, eveRef, 'signed in to the client made in the console');

  // Disable Eve: her sessions end (her API token and her page session).
  const eveToken = tokenOf(await s.action('user_account', 'signin', { email: 'eve@example.com', password: PASSWORD }));
  await admin.goto(`${base}/admin/accounts?q=eve`);
  await admin.getByRole('link', { name: 'eve@example.com' }).click();
  await screenshots(admin, 'admin-account');
  t.ok((await admin.locator('#h-sessions').locator('..').locator('tbody tr').count()) >= 1, 'her sessions are listed');
  await admin.getByLabel('Disable this account and end its sessions').check();
  await admin.getByRole('button', { name: 'Disable' }).click();
  await admin.waitForURL(/done=disabled/);
  t.match(await admin.locator('dl').textContent(), /Disabled\s*yes/);
  t.equal((await s.action('user_account', 'list_sessions', {}, eveToken)).status, 401, 'her token is refused');
  await eve.goto(`${base}/account`);
  t.match(eve.url(), /\/signin/, 'her browser is signed out');

  // Issue 34, items 8 and 10: with rows in every table, at phone and desktop widths, every button
  // and every cell stays inside its box (no sideways scrolling, nothing cut), and the account page
  // lists its groups, the apps table its open paths, the header a way to the console.
  await cli(s.dataDir, ['group', 'add', 'editors', 'eve@example.com']);
  await cli(s.dataDir, ['app', 'add', '--host', 'files.example.com', '--bypass-path', '/share', '--two-factor']);
  await cli(s.dataDir, ['user', 'invite', 'fay@example.com', '--group', 'editors']);
  await cli(s.dataDir, [
    'webhook',
    'add',
    '--url',
    'https://hooks.example.com/a/very/long/path/for/the/crm/synchronisation?key=abc',
    '--event',
    'account.created',
  ]);
  const eveId = (await s.db('user_account').where({ email_key: 'eve@example.com' }).first()).reference_id;
  for (const width of [360, 390, 1280]) {
    await admin.setViewportSize({ width, height: 800 });
    for (const path of ['accounts', 'invitations', 'groups', 'clients', 'apps', 'webhooks', 'keys', 'audit', `accounts/${eveId}`]) {
      await admin.goto(`${base}/admin/${path}`);
      t.same(await outsideItsBox(admin), [], `/admin/${path} at ${width} px: everything inside its box`);
    }
  }
  await admin.setViewportSize({ width: 1280, height: 800 });
  await admin.goto(`${base}/admin/accounts/${eveId}`);
  t.equal((await admin.locator('#account-groups').textContent())!.replace(/\s+/g, ' ').trim(), 'editors, users', "the account's managed groups");
  await screenshots(admin, 'admin-account-groups');
  await admin.goto(`${base}/admin/apps`);
  t.match(await admin.locator('table').textContent(), /\/share/, 'the apps table shows open (bypass) paths');
  await screenshots(admin, 'admin-apps-rows');
  // A refusal names the form's field as the console labels it, never the shell's flag.
  await admin.getByLabel('Host', { exact: true }).fill('https://grafana.example.com/');
  await admin.getByRole('button', { name: 'Add app' }).click();
  const refused = (await admin.getByRole('alert').textContent()) ?? '';
  t.match(refused, /^“Host” takes a host name/, 'the console words the field by its label');
  t.notMatch(refused, /--/, 'no command-line flag on a console page');
  await admin.goto(`${base}/admin/clients`);
  await admin.getByLabel('Name', { exact: true }).fill('Wiki');
  await admin.getByLabel('Redirect URIs').fill('http://wiki.example.com/callback');
  await admin.getByRole('button', { name: 'Add client' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^“Redirect URIs” must be https/);
  // A machine (client credentials for an audience) and a device: no redirect URI.
  await admin.getByLabel('Name', { exact: true }).fill('backup-job');
  await admin.getByLabel('Client credentials: a machine acting as itself (needs a secret)').check();
  await admin.getByLabel('Audience (client credentials)').fill('https://api.example.com');
  await admin.getByRole('button', { name: 'Add client' }).click();
  t.equal((await admin.locator('#h-secret').textContent())!.trim(), 'The client secret of backup-job');
  await admin.goto(`${base}/admin/clients`);
  await admin.getByLabel('Name', { exact: true }).fill('TV');
  await admin.getByLabel('Device flow: a TV or command line shows a code to confirm at /device').check();
  await admin.getByLabel('Public client (a browser or mobile app: no secret, PKCE)').check();
  await admin.getByRole('button', { name: 'Add client' }).click();
  t.match(await admin.locator('.notice.success').textContent(), /Client \S+ added/);
  const rows = await admin.locator('table').textContent();
  t.match(rows, /backup-job[\s\S]*client credentials[\s\S]*for https:\/\/api\.example\.com/, 'the grants and the audience are listed');
  t.match(rows, /TV[\s\S]*device/);
  await admin.getByLabel('Name', { exact: true }).fill('nothing');
  await admin.getByRole('button', { name: 'Add client' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^Give at least one “Redirect URIs”, or “Device flow”, or “Client credentials”/);
  await admin.goto(`${base}/admin/audit`);
  await screenshots(admin, 'admin-audit-rows');
  await admin.goto(`${base}/admin/clients`);
  await screenshots(admin, 'admin-clients-rows');
  await admin.goto(`${base}/account`);
  await admin.getByRole('navigation', { name: 'Account' }).getByRole('link', { name: 'Console' }).click();
  await admin.waitForURL(/\/admin$/);

  // The last administrator cannot be demoted here either.
  const adminRef = (await s.db('user_account').where({ email_key: 'admin@example.com' }).first()).reference_id;
  await admin.goto(`${base}/admin/accounts/${adminRef}`);
  await admin.getByLabel('Take away administration').check();
  await admin.getByRole('button', { name: 'Remove administrator' }).click();
  t.match(await admin.getByRole('alert').textContent(), /last administrator/);
  await screenshots(admin, 'admin-last-administrator');

  // Not an administrator, or a guest: nothing there.
  const guest = await (await browser.newContext()).newPage();
  for (const path of ['/admin', '/admin/accounts', '/admin/accounts/' + adminRef, '/admin/nothing/here', '/admin/clients']) {
    const r = await guest.goto(base + path);
    t.equal(r?.status(), 404, `guest ${path}`);
  }
  await s.signup('zed@example.com').catch(() => undefined);
  await cli(s.dataDir, ['user', 'create', '--email', 'zed@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const zed = await (await browser.newContext()).newPage();
  await zed.goto(`${base}/signin`);
  await fillSignin(zed, 'zed@example.com');
  await zed.waitForURL(/\/account/);
  for (const path of ['/admin', '/admin/accounts', '/admin/audit']) {
    const r = await zed.goto(base + path);
    t.equal(r?.status(), 404, `account ${path}`);
  }
  await screenshots(zed, 'admin-not-found');
});
