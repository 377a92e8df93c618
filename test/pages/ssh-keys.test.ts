// The account page's SSH keys (contract section 25) in Chromium: a key added (the form, CSRF, a
// refusal said in words), listed with its fingerprint, removed; the login shell changed; past the
// recent-sign-in window the page offers to confirm first, as for passkeys and app passwords.
// Photographed at 360 and 1280 px.
import t from 'tap';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { manualClock } from '../helpers/clock';
import { fillSignin } from '../helpers/oidc';
import { passkeyServer } from '../helpers/passkeys';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3/+bUL3vO5SYk1wD1s1QLdjVI1nOqGCqsRnCPsbdKx ada@laptop';

t.test('add, list and remove an SSH key; change the shell; confirm first when the sign-in is old', async (t) => {
  const clock = manualClock();
  const { s, base } = await passkeyServer(t, {}, { clock });
  t.equal((await s.signup('ada@example.com')).status, 200);
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${base}/signin`);
  await fillSignin(page, 'ada@example.com');
  await page.waitForURL(/\/account/);

  await page.getByLabel('Public key').fill('ssh-dss AAAAB3NzaC1kc3MAAACBAP ada@old');
  await page.getByRole('button', { name: 'Add SSH key' }).click();
  t.match(await page.getByRole('alert').textContent(), /DSA keys \(ssh-dss\) are too weak/, 'a refusal, in words');
  await page.getByLabel('Public key').fill(KEY);
  await page.getByRole('button', { name: 'Add SSH key' }).click();
  await page.waitForURL(`${base}/account?done=ssh_key_added#ssh-keys`);
  const listed = await page.locator('#ssh-key-list').textContent();
  t.match(listed, /ED25519/);
  t.match(listed, /ada@laptop/);
  t.match(listed, /SHA256:UcEg4o3mS1feePhf8Lf2dPFXUWJtc9ViJjnY7Rza1AA/, 'the fingerprint ssh-keygen -l prints');
  await page.getByLabel('Login shell').fill('/usr/bin/fish');
  await page.getByRole('button', { name: 'Change login shell' }).click();
  await page.waitForURL(`${base}/account?done=login_shell#ssh-keys`);
  t.equal(await page.getByLabel('Login shell').inputValue(), '/usr/bin/fish');
  await page.locator('#ssh-keys').scrollIntoViewIfNeeded();
  await screenshots(page, 'account-ssh-keys');
  t.same(await outsideItsBox(page), [], 'nothing leaves its box');
  await page.getByLabel('Login shell').fill('fish');
  await page.getByRole('button', { name: 'Change login shell' }).click();
  t.match(await page.getByRole('alert').textContent(), /[sS]hell must be an absolute path/);

  clock.advance(11 * 60 * 1000);
  await page.goto(`${base}/account`);
  t.equal(await page.getByRole('button', { name: 'Add SSH key' }).count(), 0, 'past the window: no form');
  t.equal(await page.getByRole('link', { name: 'Confirm it is you to add an SSH key' }).count(), 1);
  await page.getByRole('button', { name: /Remove the SSH key/ }).click();
  await page.waitForURL(`${base}/account?done=ssh_key_removed#ssh-keys`);
  t.equal(await page.locator('#ssh-key-list').count(), 0, 'removed (no recent sign-in needed to remove)');
  await screenshots(page, 'account-ssh-keys-confirm');
  t.equal((await s.db('delivery').where({ topic: 'ssh_key' })).length, 2, 'the add and the removal told by mail');
  // A form without the page's CSRF token changes nothing.
  const forged = await s.call('POST', '/account/ssh-keys', { body: { sshKey: KEY } });
  t.not(forged.status, 200);
  t.equal((await s.db('ssh_key')).length, 0);
});
