// App passwords (contract section 15): made from the shell, on /account and in the console, shown
// once, kept only as SHA-256, listed with name and last use, revoked one by one; audited.
import { createHash } from 'node:crypto';
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, withAdmin } from '../helpers/server';

const sha256 = (v: string) => createHash('sha256').update(v).digest('hex');

t.test('from the shell: add (printed once), list, revoke; only the hash is stored', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'gil@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const made = await cli(s.dataDir, ['--json', 'user', 'app-password', 'add', 'gil@example.com', '--name', 'Jellyfin']);
  t.equal(made.code, 0, made.err);
  const secret: string = made.json.secret;
  t.match(secret, /^[A-Za-z0-9_-]{8}(-[A-Za-z0-9_-]{8}){3}$/, '192 random bits in four groups');
  const row = await s.db('app_password').first();
  t.equal(row.secret_hash, sha256(secret), 'stored as its SHA-256');
  t.notMatch(JSON.stringify(await s.db('app_password')), secret, 'never in clear');
  const listed = await cli(s.dataDir, ['--json', 'user', 'app-password', 'list', 'gil@example.com']);
  t.same(
    listed.json.app_passwords.map((p: { name: string; last_used_at: string | null }) => [p.name, p.last_used_at]),
    [['Jellyfin', null]],
  );
  t.notMatch(listed.out, secret, 'the list never shows it');
  const plain = await cli(s.dataDir, ['user', 'app-password', 'add', 'gil@example.com', '--name', 'NAS']);
  t.match(plain.out, /password: +\S{35}\n\nShown this once/);
  t.equal((await cli(s.dataDir, ['user', 'app-password', 'add', 'gil@example.com', '--name', ' '])).code, 2, 'an empty name: exit 2');
  t.equal((await cli(s.dataDir, ['user', 'app-password', 'revoke', 'gil@example.com', 'nope'])).code, 4, 'unknown: exit 4');
  t.equal((await cli(s.dataDir, ['user', 'app-password', 'revoke', 'gil@example.com', made.json.app_password.id])).code, 0);
  t.same(
    (await cli(s.dataDir, ['--json', 'user', 'app-password', 'list', 'gil@example.com'])).json.app_passwords.map((p: { name: string }) => p.name),
    ['NAS'],
  );
  t.ok(await s.db('audit_event').where({ event: 'app_password_added' }).first(), 'audited');
  t.ok(await s.db('audit_event').where({ event: 'app_password_revoked' }).first(), 'audited');
  t.notMatch(s.logs.join(''), secret, 'in no log line');
});

t.test('on /account and in the console: made (shown once), listed, revoked', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'hal@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const browser = await launch(t);
  const page = await browser.newPage();
  await page.goto(`${s.url}/signin`);
  await fillSignin(page, 'hal@example.com');
  await page.waitForURL(/\/account/);
  await page.getByLabel('Which app is it for?').fill('Nextcloud');
  await page.getByRole('button', { name: 'Make an app password' }).click();
  const secret = (await page.locator('#app-password').textContent())!.trim();
  t.equal(sha256(secret), (await s.db('app_password').first()).secret_hash, 'the one shown is the one stored');
  await screenshots(page, 'account-app-password');
  await page.goto(`${s.url}/account`);
  t.equal(await page.locator('#app-password').count(), 0, 'shown once');
  t.match(await page.locator('#app-password-list').textContent(), /Nextcloud[\s\S]*last used never/);
  await page.getByRole('button', { name: 'Revoke the app password Nextcloud' }).click();
  await page.waitForURL(/done=app_password_revoked/);
  t.equal((await s.db('app_password')).length, 0);

  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${s.url}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  const ref = (await s.db('user_account').where({ email_key: 'hal@example.com' }).first()).reference_id;
  await admin.goto(`${s.url}/admin/accounts/${ref}`);
  await admin.getByLabel('Which app is it for?').fill('Gitea');
  await admin.getByRole('button', { name: 'Make an app password' }).click();
  const made = (await admin.locator('#app-password').textContent())!.trim();
  t.equal(sha256(made), (await s.db('app_password').first()).secret_hash);
  await screenshots(admin, 'admin-app-password');
  await admin.goto(`${s.url}/admin/accounts/${ref}`);
  await admin.getByLabel('Revoke the app password Gitea').check();
  await admin.getByRole('button', { name: 'Revoke' }).click();
  await admin.waitForURL(/done=app_password_revoked/);
  t.equal((await s.db('app_password')).length, 0, 'revoked from the console');
});
