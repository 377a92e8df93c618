// Usernames (contract section 15): made from the email when not chosen, chosen at signup, changed
// by the account (its record) and from the shell; unique and lower case; clear refusals; a store
// made before usernames gets one for every account, unique.
import t from 'tap';
import { sqliteFileKnex } from '../../src/store/connection';
import path from 'node:path';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { errorCode, PASSWORD, setSignup, tempDir, withAdmin } from '../helpers/server';
import { MIGRATIONS } from '../../src/store/migrations';

const guest = (email: string, extra: Record<string, unknown> = {}) => ({ email, name: 'N', password: PASSWORD, passwordConfirm: PASSWORD, ...extra });

t.test('made from the email, chosen at signup, unique, lower case; refusals are clear', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await s.action('user_account', 'signup', guest('ann@example.com'))).status, 200);
  t.equal((await s.action('user_account', 'signup', guest('ann@other.example'))).status, 200);
  t.equal((await s.action('user_account', 'signup', guest('Bob.Smith+news@example.com'))).status, 200);
  t.equal((await s.action('user_account', 'signup', guest('cy@example.com', { username: 'Cy_Admin' }))).status, 200);
  const names = async (email: string) => (await cli(s.dataDir, ['--json', 'user', 'show', email])).json.username;
  t.equal(await names('ann@example.com'), 'ann');
  t.equal(await names('ann@other.example'), 'ann2', 'made unique with a number');
  t.equal(await names('bob.smith+news@example.com'), 'bob.smithnews', 'only allowed characters');
  t.equal(await names('cy@example.com'), 'cy_admin', 'chosen, lower-cased');

  const taken = await s.action('user_account', 'signup', guest('dee@example.com', { username: 'ann' }));
  t.equal(taken.status, 409);
  t.equal(errorCode(taken), 'name_taken');
  const bad = await s.action('user_account', 'signup', guest('eve@example.com', { username: '-x' }));
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body), /username is 1 to 128 characters/);
  t.equal(await s.db('user_account').where({ email_key: 'eve@example.com' }).first(), undefined, 'nothing made');

  // The account changes its own through its record; the shell changes anyone's.
  const ann = await s.signin('ann@example.com');
  const me = await s.call('GET', '/api/user_account', { token: ann });
  const id = me.body.data[0].id;
  t.equal(me.body.data[0].attributes.username, 'ann', 'the record shows it');
  const patch = (username: string) =>
    s.call('PATCH', `/api/user_account/${id}`, { token: ann, body: { data: { type: 'user_account', id, attributes: { username } } } });
  t.equal((await patch('ann.lee')).status, 200);
  t.equal(await names('ann@example.com'), 'ann.lee');
  t.equal((await patch('cy_admin')).status, 409, "another account's username: 409");
  t.equal((await patch('no spaces')).status, 400);
  t.ok(await s.db('audit_event').where({ event: 'username_changed' }).first(), 'audited');

  const set = await cli(s.dataDir, ['user', 'set-username', 'ann@other.example', 'annie']);
  t.equal(set.code, 0, set.err);
  t.match(set.out, /username is now annie/);
  t.equal((await cli(s.dataDir, ['user', 'set-username', 'ann@other.example', 'ann.lee'])).code, 3, 'taken: exit 3');
  t.equal((await cli(s.dataDir, ['user', 'set-username', 'ann@other.example', 'Bad Name'])).code, 2, 'bad: exit 2');
  t.match((await cli(s.dataDir, ['user', 'list'])).out, /annie/);
});

t.test('a store made before usernames gets one for every account, unique', async (t) => {
  const dir = tempDir(t);
  const knex = sqliteFileKnex(path.join(dir, 'gatehouse.sqlite'), '', 5000);
  t.teardown(() => knex.destroy());
  const before = MIGRATIONS.findIndex(([name]) => name === '20261201000000_usernames');
  await knex.migrate.latest({
    migrationSource: {
      getMigrations: async () => MIGRATIONS.slice(0, before),
      getMigrationName: ([name]) => name,
      getMigration: async ([, m]) => m,
    },
  });
  const now = Date.now();
  for (const [i, email] of ['ann@example.com', 'ann@other.example', 'ANN@third.example', '.dot@example.com'].entries()) {
    await knex('user_account').insert({
      reference_id: `00000000-0000-4000-8000-00000000000${i}`,
      email,
      email_key: email.toLowerCase(),
      name: 'N',
      password: '',
      permission: 0,
      created_at: now,
      updated_at: now,
    });
  }
  await knex.destroy();
  // The shell opens the SQLite file in this folder (on either pass) and migrates it.
  const listed = await cli(dir, ['--json', 'user', 'list']);
  t.equal(listed.code, 0, listed.err);
  t.same(
    listed.json.accounts.map((r: { username: string }) => r.username),
    ['ann', 'ann2', 'ann3', 'dot'],
  );
});

t.test('the account page shows the username and changes it; a taken one is refused in words', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'flo@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const browser = await launch(t);
  const page = await browser.newPage();
  await page.goto(`${s.url}/signin`);
  await fillSignin(page, 'flo@example.com');
  await page.waitForURL(/\/account/);
  t.equal(await page.locator('#username').textContent(), 'flo');
  await page.getByLabel('New username').fill('Flo.Martin');
  await page.getByRole('button', { name: 'Change username' }).click();
  await page.waitForURL(/done=username/);
  t.equal(await page.locator('#username').textContent(), 'flo.martin');
  await screenshots(page, 'account-username');
  await page.getByLabel('New username').fill('admin');
  await page.getByRole('button', { name: 'Change username' }).click();
  t.match(await page.getByRole('alert').textContent(), /The username admin is taken/);

  // An administrator changes it in the console.
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${s.url}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  const ref = (await s.db('user_account').where({ email_key: 'flo@example.com' }).first()).reference_id;
  await admin.goto(`${s.url}/admin/accounts/${ref}`);
  await admin.getByLabel('New username').fill('florence');
  await admin.getByRole('button', { name: 'Change username' }).click();
  await admin.waitForURL(/done=username_changed/);
  t.equal(await admin.locator('#account-username').textContent(), 'florence');
  await screenshots(admin, 'admin-account-username');
  await admin.getByLabel('New username').fill('x y');
  await admin.getByRole('button', { name: 'Change username' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^“New username” is 1 to 128 characters/);
});
