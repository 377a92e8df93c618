// Webhooks in the console, in Chromium: add one (its secret shown once), see a failing endpoint
// and the message waiting with its error, rotate the secret, remove it; photographed at 360 and
// 1280 px.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { freePort } from '../helpers/browser';
import { fillSignin } from '../helpers/oidc';
import { passkeyServer } from '../helpers/passkeys';

t.test('the console adds, shows, rotates and removes a webhook; a failing endpoint is plain to see', async (t) => {
  const { s, base } = await passkeyServer(t, { webhookAllowPrivate: ['loopback'] });
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  await admin.goto(`${base}/admin/webhooks`);
  await screenshots(admin, 'admin-webhooks-empty');

  const closed = await freePort();
  await admin.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${closed}/gatehouse`);
  await admin.getByLabel('Description').fill('CRM sync');
  await admin.getByLabel('account.created').check();
  await admin.getByRole('button', { name: 'Add webhook' }).click();
  const secret = (await admin.locator('#webhook-secret').textContent())!.trim();
  t.match(secret, /^whsec_/, 'the secret, once');
  await screenshots(admin, 'admin-webhook-secret');
  await admin.goto(`${base}/admin/webhooks`);
  t.notMatch(await admin.content(), /whsec_/, 'never again');
  t.ok(await s.db('audit_event').where({ event: 'webhook_added' }).first(), 'audited');

  await s.signup('new@example.com');
  await s.core.settle();
  await admin.reload();
  const text = (await admin.locator('main').textContent())!;
  t.match(text, /1 waiting/, 'the endpoint shows a message waiting');
  t.match(text, /ECONNREFUSED/, 'with its last error');
  t.match(text, /webhook account\.created/, 'the queue lists it');
  await screenshots(admin, 'admin-webhooks-failing');

  await admin.getByLabel('Replace the secret of').check();
  await admin.getByRole('button', { name: 'New secret' }).click();
  const rotated = (await admin.locator('#webhook-secret').textContent())!.trim();
  t.not(rotated, secret, 'a new secret');

  await admin.getByLabel('Remove http').check();
  await admin.getByRole('button', { name: 'Remove' }).click();
  await admin.waitForURL(/done=webhook_removed/);
  t.match(await admin.locator('main').textContent(), /No webhooks yet/);
  t.equal((await s.db('delivery').where({ kind: 'webhook' })).length, 0, 'its waiting message went with it');

  // A refusal names the form's field, not the shell's flag.
  await admin.getByLabel('URL', { exact: true }).fill('ftp://hooks.example.com/x');
  await admin.getByRole('button', { name: 'Add webhook' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^“URL” must be http or https, not ftp/);
  t.equal((await cli(s.dataDir, ['--json', 'webhook', 'list'])).json.webhooks.length, 0, 'nothing stored');
});

t.test('issue 46, item 4: the console refuses a target inside the network unless the operator allows it', async (t) => {
  const { base } = await passkeyServer(t);
  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${base}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.goto(`${base}/admin/webhooks`);
  await admin.getByLabel('URL', { exact: true }).fill('http://169.254.169.254/latest/meta-data');
  await admin.getByRole('button', { name: 'Add webhook' }).click();
  t.match(await admin.getByRole('alert').textContent(), /^“URL” is a link-local address: Gatehouse does not send requests inside the network/);
  await screenshots(admin, 'admin-webhooks-private-refused');
});
