// A SAML service provider nobody here wrote: Apache httpd with mod_auth_mellon (Lasso), its key,
// certificate and metadata made by mellon_create_metadata and registered with `saml sp add
// --metadata`, guarding a folder whose script shows REMOTE_USER and the MELLON_ variables; the
// block is docs/saml.md's. Chromium signs in through it: a member gets in, someone outside the
// gate and a disabled account do not, and signing out through mellon ends the Gatehouse session.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { docBlock, startApache } from '../helpers/proxies';
import { setSignup, startTestServer, tempDir } from '../helpers/server';

const SAML_DOC = path.join(__dirname, '..', '..', 'docs', 'saml.md');

t.test('mod_auth_mellon signs people in with Gatehouse, and out', async (t) => {
  // Plain http on one site (gh.test, mapped to 127.0.0.1 in Chromium): mellon's cookie is
  // SameSite=None, which a browser keeps only with Secure (https, as the documented block has it);
  // here it has no SameSite (Lax), and comes back with the Response's POST: Gatehouse is on its site.
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://id.gh.test:${port}` });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  for (const email of ['ada@example.com', 'bob@example.com', 'cy@example.com']) await s.signup(email);
  await cli(s.dataDir, ['group', 'create', 'staff']);
  for (const who of ['ada@example.com', 'cy@example.com']) await cli(s.dataDir, ['group', 'add', 'staff', who]);

  const web = await freePort();
  const app = `http://wiki.gh.test:${web}`;
  const keys = tempDir(t, 'gatehouse-mellon-');
  fs.chmodSync(keys, 0o755);
  execFileSync('mellon_create_metadata', [`${app}/mellon`, `${app}/mellon`], { cwd: keys, stdio: 'ignore' });
  const base = path.join(
    keys,
    fs
      .readdirSync(keys)
      .find((f) => f.endsWith('.xml'))!
      .replace(/\.xml$/, ''),
  );
  for (const [from, to] of [
    ['.key', 'sp.key'],
    ['.cert', 'sp.cert'],
    ['.xml', 'sp.xml'],
  ]) {
    fs.renameSync(base + from, path.join(keys, to));
    fs.chmodSync(path.join(keys, to), 0o644);
  }
  fs.writeFileSync(path.join(keys, 'idp.xml'), await (await fetch(`${s.url}/saml/metadata`)).text());
  const added = await cli(s.dataDir, ['--json', 'saml', 'sp', 'add', '--metadata', path.join(keys, 'sp.xml'), '--name', 'Wiki', '--allowed-group', 'staff']);
  t.equal(added.code, 0, added.err);
  t.equal(added.json.authn_requests_signed, true, "mellon signs its requests: Gatehouse checks them with the metadata's certificate");

  const block = docBlock('mellon', SAML_DOC)
    .replaceAll('/etc/apache2/mellon', keys)
    .replace('MellonSecureCookie On', 'MellonSecureCookie Off\n    SetEnv MELLON_DISABLE_SAMESITE 1');
  const apacheDir = await startApache(t, web, ['auth_mellon', 'cgi', 'alias', 'env'], (dir) => {
    fs.mkdirSync(path.join(dir, 'cgi'), { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'cgi', 'whoami'), '#!/bin/sh\nprintf "Content-Type: text/plain\\n\\n"\nenv | grep -E "^(REMOTE_USER|MELLON_)" | sort\n', {
      mode: 0o755,
    });
    return `${block}\nScriptAlias /private/ ${dir}/cgi/\n`;
  });

  const browser = await launch(t, ['--host-resolver-rules=MAP *.gh.test 127.0.0.1']);
  const signIn = async (email: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${app}/private/whoami`);
    await page.waitForURL((u) => u.pathname.startsWith('/saml/continue/'));
    if (email === 'ada@example.com') await screenshots(page, 'saml-signin');
    await fillSignin(page, email);
    await page.waitForLoadState('networkidle');
    return { context, page };
  };

  // A member of the gate: mellon receives the Response and the script sees who signed in.
  const ada = await signIn('ada@example.com');
  await ada.page.waitForURL(`${app}/private/whoami`, { timeout: 5000 }).catch(async (err) => {
    throw new Error(
      `${err.message}\nat ${ada.page.url()}: ${(await ada.page.locator('body').textContent())?.slice(0, 400)}\n${fs.readFileSync(path.join(apacheDir, 'error.log'), 'utf8').slice(-3000)}`,
    );
  });
  const shown = (await ada.page.locator('body').textContent())!;
  t.match(shown, /REMOTE_USER=ada@example\.com/, 'REMOTE_USER is the NameID (the email)');
  t.match(shown, /MELLON_email=ada@example\.com/);
  t.match(shown, /MELLON_username=ada/);
  t.match(shown, /MELLON_groups=(staff;users|users;staff)/, 'the managed groups');
  await screenshots(ada.page, 'saml-mellon-app');

  // Signing out through mellon: its LogoutRequest ends the Gatehouse session, its LogoutResponse brings the browser back.
  await ada.page.goto(`${app}/mellon/logout?ReturnTo=${encodeURIComponent(`${app}/`)}`);
  await ada.page.waitForURL(`${app}/`);
  await ada.page.goto(`${s.config.publicUrl}/account`);
  t.match(new URL(ada.page.url()).pathname, /^\/signin/, 'the Gatehouse session has ended');
  await ada.context.close();

  // Outside the gate: a page says so, and mellon gets nothing.
  const bob = await signIn('bob@example.com');
  t.match(await bob.page.locator('body').textContent(), /may not sign in to Wiki/);
  t.equal(new URL(bob.page.url()).host, new URL(s.config.publicUrl).host, 'the browser stays on Gatehouse');
  await screenshots(bob.page, 'saml-not-allowed');
  await bob.context.close();

  // A disabled account cannot sign in, so nothing is posted.
  await cli(s.dataDir, ['user', 'disable', 'cy@example.com']);
  const cy = await signIn('cy@example.com');
  t.notOk(cy.page.url().startsWith(app), 'a disabled account never reaches the app');
  t.match(await cy.page.locator('body').textContent(), /disabled|incorrect|not/i);
  await cy.context.close();
});
