// docs/oidc-apps.md's Apache httpd + mod_auth_openidc recipe, run as written: its shell lines and
// its whole httpd.conf, in an empty folder as an ordinary user. Chromium signs in through it and
// the page shows who signed in; `gatehouse user revoke-sessions` then reaches Apache through the
// back-channel (a logout token, POSTed by the delivery queue) and its next page sends the browser
// to sign in again; the app's own sign-out link ends its session and Gatehouse's.
//
// What the test changes in the recipe, and nothing else:
//   - the ports: 6336 (Gatehouse) and 8080 (Apache) become free ones, everywhere in both blocks;
//   - `gatehouse serve` is the test's server (in-process, with the recipe's public URL and
//     --webhook-allow-private), and each other `gatehouse` line runs through the CLI in-process
//     against its store, its `> file` written in the recipe's folder;
//   - the other lines run with /bin/sh in the folder, as `nobody` when the test runs as root.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort, launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { foregroundLine, ordinaryUser, shellLine } from '../helpers/saml';
import { startTestServer, tempDir } from '../helpers/server';
import { appsDocBlock, gatehouseLine, recipeLines, visit } from '../helpers/apache-openidc';

const ADMIN = 'admin@example.com';
const ADMIN_PASSWORD = 'a long admin password';

t.test("docs/oidc-apps.md's Apache mod_auth_openidc setup signs people in, and hears when their session ends", async (t) => {
  const [gatePort, web] = [await freePort(), await freePort()];
  const ports = (text: string) => text.replaceAll('6336', String(gatePort)).replaceAll('8080', String(web));
  const lines = recipeLines(ports(appsDocBlock('openidc-shell')));
  const conf = ports(appsDocBlock('openidc'));
  t.match(conf, /^Listen 127\.0\.0\.1:\d+$/m, 'the file is whole: it says where Apache listens');
  t.match(conf, /^LoadModule auth_openidc_module /m, 'and loads mod_auth_openidc');

  const publicUrl = `http://id.app.localhost:${gatePort}`;
  const serveLine = lines.find((l) => l.startsWith('gatehouse serve '));
  t.equal(serveLine, `gatehouse serve --public-url ${publicUrl} --webhook-allow-private loopback`);
  const s = await startTestServer(t, { port: gatePort, publicUrl, webhookAllowPrivate: ['loopback'] });

  const dir = tempDir(t, 'gatehouse-openidc-');
  fs.chmodSync(dir, 0o755);
  const user = ordinaryUser(dir);
  fs.writeFileSync(path.join(dir, 'httpd.conf'), conf);
  const logs = () => {
    const file = path.join(dir, 'error.log');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').slice(-3000) : '';
  };

  for (const line of lines) {
    if (line === serveLine) continue;
    if (/^(printf '[^']*' \| )?gatehouse /.test(line)) {
      const r = await gatehouseLine(s.dataDir, line, dir, user);
      t.equal(r.code, 0, `${line}: ${r.err}`);
    } else if (line.startsWith('/usr/sbin/apache2 ')) {
      await foregroundLine(t, line, dir, user, web, logs);
    } else {
      await shellLine(line, dir, user);
    }
  }
  t.equal(fs.statSync(path.join(dir, 'client.conf')).mode & 0o777, 0o600, 'the secret file is readable by its owner only');
  const shown = await cli(s.dataDir, ['--json', 'client', 'list']);
  t.match(shown.json?.clients, [{ name: 'Wiki', backchannel_logout_uri: `http://localhost:${web}/protected/redirect_uri?logout=backchannel` }]);

  const app = `http://localhost:${web}`;
  const browser = await launch(t);
  const context = await browser.newContext();
  const page = await context.newPage();
  const signIn = async () => {
    await page.goto(`${app}/protected/`);
    await page.waitForURL((u) => u.host === new URL(publicUrl).host);
    await fillSignin(page, ADMIN, ADMIN_PASSWORD);
    await page
      .waitForURL((u) => u.href.startsWith(`${app}/protected/`), { timeout: 10_000 })
      .catch(async (err) => {
        throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.slice(0, 400)}\n${logs()}`);
      });
  };

  // Signed in: the page shows what mod_auth_openidc tells the app.
  await signIn();
  const body = (await page.locator('body').textContent())!;
  t.match(body, /^REMOTE_USER=admin@example\.com$/m, 'REMOTE_USER is the email (OIDCRemoteUserClaim email)');
  t.match(body, /^OIDC_CLAIM_email=admin@example\.com$/m);
  t.match(body, /^OIDC_CLAIM_groups=.*\badministrators\b/m, 'the managed groups');
  t.match(body, /^OIDC_CLAIM_amr=pwd$/m, 'a password sign-in');
  t.match(body, /^OIDC_CLAIM_acr=https:\/\/refeds\.org\/profile\/sfa$/m, 'at one factor');
  t.match(body, /^OIDC_CLAIM_sid=\S+$/m, 'the ID token names the session');
  const served = async () => (await visit(`${app}/protected/`, context)).status;
  t.equal(await served(), 200, 'Apache serves her page');

  // The operator ends her sessions from the shell: the logout token reaches Apache through the queue.
  t.equal((await cli(s.dataDir, ['user', 'revoke-sessions', ADMIN])).code, 0);
  let status = 200;
  for (let i = 0; i < 150 && status === 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = await served();
  }
  t.equal(status, 302, 'Apache no longer serves her: it sends the browser to sign in', status === 302 ? {} : { logs: logs() });
  const next = await visit(`${app}/protected/`, context);
  t.equal(new URL(next.location ?? '', app).origin, publicUrl, 'to Gatehouse');
  t.same((await cli(s.dataDir, ['--json', 'deliveries'])).json?.deliveries, [], 'nothing is left in the queue');

  // Signed in again; the app's own sign-out link ends its session and, once confirmed, Gatehouse's.
  await signIn();
  t.equal(await served(), 200);
  await page.goto(`${app}/protected/redirect_uri?logout=${encodeURIComponent(`${app}/`)}`);
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await page.waitForURL(`${app}/`, { timeout: 10_000 });
  t.equal(await served(), 302, "the app's session has ended");
  await page.goto(`${publicUrl}/account`);
  t.match(new URL(page.url()).pathname, /^\/signin/, 'and so has the Gatehouse session');
});
