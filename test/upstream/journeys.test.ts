// Sign in with another provider, end to end: a second Gatehouse (the packaged executable, its own
// store) is the upstream, with clients added there for this one. Chromium signs in here through
// it: a new person refused while signup is closed and let in with an invitation; a returning
// sign-in; an existing account linked from /account (and no takeover by email); --trust-email on
// (verified address linked) and off; TOTP still asked; the last way in kept.
import path from 'node:path';
import { sqliteFileKnex } from '../../src/store/connection';
import t from 'tap';
import { manualClock, totpAt } from '../helpers/clock';
import type { Browser, Page } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { exeFolder, runExe, serveExe } from '../helpers/exe';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, startTestServer, type TestServer } from '../helpers/server';

async function upstreamGatehouse(t: Parameters<typeof exeFolder>[0]) {
  const { dir, exe, env } = exeFolder(t);
  const data = path.join(dir, 'data');
  // 127.0.0.1, not the default localhost: browsers keep cookies by host, not port, and the two
  // servers' session cookies would overwrite each other on one host name.
  const port = await freePort();
  const server = await serveExe(t, exe, ['--data-dir', data, '--no-rate-limits', '--port', String(port), '--public-url', `http://127.0.0.1:${port}`], {
    env,
    cwd: dir,
  });
  const run = async (...args: string[]) => {
    const r = await runExe(exe, ['--data-dir', data, ...args], { env: { ...env, PW: PASSWORD }, cwd: dir });
    if (r.code !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await run('user', 'create', '--email', 'root@upstream.example', '--password-env', 'PW');
  for (const email of ['ann@example.com', 'bob@example.com', 'carl@example.com', 'dave@example.com', 'eve@example.com']) {
    await run('user', 'create', '--email', email, '--password-env', 'PW');
  }
  // Carl's address is confirmed upstream (the upstream's own fixture: what its email_verified says).
  const db = sqliteFileKnex(path.join(data, 'gatehouse.sqlite'), '', 5000);
  await db('user_account').where({ email_key: 'carl@example.com' }).update({ email_verified: true });
  await db.destroy();
  const client = async (name: string, redirect: string) =>
    JSON.parse(await run('--json', 'client', 'add', '--name', name, '--redirect-uri', redirect, '--first-party'));
  return { url: server.url, client };
}

async function signInThrough(page: Page, base: string, display: string, email: string, o: { invite?: string } = {}) {
  await page.goto(o.invite ? `${base}/signup?invite=${o.invite}` : `${base}/signin`);
  await page.getByRole('button', { name: `Continue with ${display}` }).click();
  await page.waitForURL((u) => u.pathname === '/signin' || u.pathname.startsWith('/oidc/'));
  if (!page.url().startsWith(base)) await fillSignin(page, email);
}

t.test('sign in through another Gatehouse: invitations, returning, linking, trust-email, TOTP', async (t) => {
  const up = await upstreamGatehouse(t);
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const clock = manualClock();
  const s: TestServer = await startTestServer(t, { port, publicUrl: base }, undefined, { clock });
  await s.signup('admin@example.com');
  t.equal((await cli(s.dataDir, ['group', 'create', 'editors'])).code, 0);
  const plain = await up.client('Downstream', `${base}/signin/provider/upstream/callback`);
  const trusted = await up.client('Downstream (trusted)', `${base}/signin/provider/trusted/callback`);
  const env: Record<string, string> = { A: plain.client_secret, B: trusted.client_secret };
  // The shell knows the public URL from the environment, as a service's commands do.
  env.GATEHOUSE_PUBLIC_URL = base;
  const add = await cli(
    s.dataDir,
    [
      '--json',
      'provider',
      'add',
      '--name',
      'upstream',
      '--issuer',
      up.url,
      '--client-id',
      plain.client_id,
      '--client-secret-env',
      'A',
      '--display-name',
      'Upstream',
    ],
    { env },
  );
  t.equal(add.code, 0, add.err);
  t.equal(add.json.redirect_uri, `${base}/signin/provider/upstream/callback`, 'provider add names the redirect URI to register');
  t.notMatch(add.out, new RegExp(plain.client_secret), 'and never prints the secret');
  t.equal(
    (
      await cli(
        s.dataDir,
        [
          'provider',
          'add',
          '--name',
          'trusted',
          '--issuer',
          up.url,
          '--client-id',
          trusted.client_id,
          '--client-secret-env',
          'B',
          '--display-name',
          'Trusted',
          '--trust-email',
        ],
        { env },
      )
    ).code,
    0,
  );
  const browser: Browser = await launch(t);
  const fresh = async () => (await browser.newContext()).newPage();
  const accounts = async () => Number((await s.db('user_account').count({ n: '*' }).first())?.n);

  // A new person while guest signup is closed: refused, nothing made.
  const before = await accounts();
  const ann = await fresh();
  await ann.goto(`${base}/signin`);
  await screenshots(ann, 'signin-providers');
  await signInThrough(ann, base, 'Upstream', 'ann@example.com');
  await ann.waitForURL((u) => u.pathname.endsWith('/callback'));
  t.match(await ann.getByRole('alert').textContent(), /new accounts need an invitation/);
  await screenshots(ann, 'provider-refused');
  t.equal(await accounts(), before, 'no account made');
  t.equal(Number((await s.db('linked_identity').count({ n: '*' }).first())?.n), 0, 'nothing linked');

  // With an invitation: the account is made (the invitation's address and group), linked, signed in.
  const invited = await cli(s.dataDir, ['--json', 'user', 'invite', 'ann@example.com', '--group', 'editors', '--print-link']);
  const token = new URL(invited.json.link).searchParams.get('invite')!;
  const ann2 = await fresh();
  await signInThrough(ann2, base, 'Upstream', 'ann@example.com', { invite: token });
  await ann2.waitForURL(`${base}/account`);
  t.match(await ann2.locator('dl').textContent(), /ann@example\.com/, 'signed in here as Ann');
  t.match(await ann2.locator('#h-identities').locator('..').textContent(), /Upstream/, 'the account page lists the linked sign-in');
  await screenshots(ann2, 'account-identities');
  t.same(
    ((await cli(s.dataDir, ['--json', 'group', 'show', 'editors'])).json.members as Array<{ email: string }>).map((m) => m.email),
    ['ann@example.com'],
  );

  // Returning: a fresh browser, the same upstream account, the same account here.
  const ann3 = await fresh();
  await signInThrough(ann3, base, 'Upstream', 'ann@example.com');
  await ann3.waitForURL(`${base}/account`);
  t.match(await ann3.locator('dl').textContent(), /ann@example\.com/, 'a returning sign-in');
  // Her only way in cannot be unlinked.
  await ann3.getByRole('button', { name: 'Unlink Upstream' }).click();
  t.match(await ann3.getByRole('alert').first().textContent(), /only way to sign in/);

  // Bob has an account here with the same address: no takeover by email without --trust-email.
  await cli(s.dataDir, ['user', 'create', '--email', 'bob@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const bob = await fresh();
  await signInThrough(bob, base, 'Upstream', 'bob@example.com');
  await bob.waitForURL((u) => u.pathname.endsWith('/callback'));
  t.match(await bob.getByRole('alert').textContent(), /Sign in to it first/);
  // He signs in here with his password and links from /account (already signed in upstream: straight back).
  await bob.goto(`${base}/signin`);
  await fillSignin(bob, 'bob@example.com');
  await bob.waitForURL(/\/account/);
  await bob.getByRole('button', { name: 'Link Upstream' }).click();
  await bob.waitForURL(/done=linked/);
  t.ok(await s.db('audit_event').where({ event: 'identity_linked' }).first(), 'audited');
  // TOTP on: signing in through the provider still asks for the code.
  const bobToken = await s.signin('bob@example.com');
  const enrol = await s.action('user_account', 'totp_enroll', { password: PASSWORD }, bobToken);
  const secret = enrol.body.find((i: { ResponseType: string }) => i.ResponseType === 'totp.secret').Attributes.secret;
  await s.action('user_account', 'totp_confirm', { otp: await totpAt(secret, clock) }, bobToken);
  clock.advance(30_000);
  const bob2 = await fresh();
  await signInThrough(bob2, base, 'Upstream', 'bob@example.com');
  await bob2.getByLabel('Authentication code').waitFor();
  await screenshots(bob2, 'provider-totp');
  await bob2.getByLabel('Authentication code').fill(await totpAt(secret, clock));
  await bob2.getByRole('button', { name: 'Sign in', exact: true }).click();
  await bob2.waitForURL(`${base}/account`);
  t.match(await bob2.locator('dl').textContent(), /bob@example\.com/, 'signed in after the code');

  // --trust-email: Carl's verified address links to his account here; Dave's unverified one does not.
  await cli(s.dataDir, ['user', 'create', '--email', 'carl@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  // Carl confirmed his address here too (a trusted email links only to an account that proved it).
  await s.db('user_account').where({ email_key: 'carl@example.com' }).update({ email_verified: true });
  await cli(s.dataDir, ['user', 'create', '--email', 'dave@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const carl = await fresh();
  await signInThrough(carl, base, 'Trusted', 'carl@example.com');
  await carl.waitForURL(`${base}/account`);
  t.match(await carl.locator('dl').textContent(), /carl@example\.com/, 'a verified address from a trusted provider links');
  const dave = await fresh();
  await signInThrough(dave, base, 'Trusted', 'dave@example.com');
  await dave.waitForURL((u) => u.pathname.endsWith('/callback'));
  t.match(await dave.getByRole('alert').textContent(), /Sign in to it first/, 'an unverified one does not');
  const providers = await cli(s.dataDir, ['--json', 'provider', 'list']);
  t.same(
    providers.json.providers.map((p: { name: string; linked_identities: number }) => [p.name, p.linked_identities]),
    [
      ['trusted', 1],
      ['upstream', 2],
    ],
  );

  // Ann signs in only through it: removing the provider would lock her out, so it asks for --force.
  const refused = await cli(s.dataDir, ['provider', 'remove', 'upstream']);
  t.equal(refused.code, 3, 'refused while an account has no other way in');
  t.match(refused.err, /1 account signs in only through upstream/);
  const forced = await cli(s.dataDir, ['--json', 'provider', 'remove', 'upstream', '--force']);
  t.equal(forced.code, 0, forced.err);
  t.equal(forced.json.removed.linked_identities, 2, 'and its identities go with it');
});
