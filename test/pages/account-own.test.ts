// The account page's own parts in Chromium at 360 and 1280 px (screenshots in test-results/pages):
// sessions by device with how and when, each signed out alone and "everywhere else"; a connected
// app revoked (its refresh token refused after); the data downloaded as a JSON attachment; the
// account deleted with its password; each button refused without the page's CSRF token.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { launch, outsideItsBox, SCREENS, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';
import { PASSWORD, setSignup, withAdmin } from '../helpers/server';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

t.test('sessions, connected apps, the download and the deletion on /account', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const client = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Team wiki', '--redirect-uri', REDIRECT, '--first-party'])).json as {
    client_id: string;
    client_secret: string;
  };
  const { code, verifier } = await authorizationCode(s.url, client.client_id, 'ada@example.com', PASSWORD, 'openid email profile offline_access');
  const tokens = await token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  t.equal(tokens.status, 200);
  // Another device, signed in over the API.
  await s.call('POST', '/action/user_account/signin', {
    body: { attributes: { email: 'ada@example.com', password: PASSWORD } },
    headers: { 'user-agent': FIREFOX },
  });

  const browser = await launch(t);
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'ada@example.com');
  await page.waitForURL(/\/account/);

  const sessions = page.locator('#sessions');
  t.match(await sessions.textContent(), /this browser/);
  t.match(await sessions.textContent(), /Firefox on Windows/, 'the other device by browser and system');
  t.match(
    await sessions.textContent(),
    /signed in [A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d\s[AP]M UTC with password/,
    "the time as the reader's locale writes it",
  );
  t.match(await sessions.textContent(), /last seen/);
  const apps = page.locator('#apps');
  t.match(await apps.textContent(), /Team wiki/);
  t.match(await apps.textContent(), /may read: email, offline_access, openid, profile · also while you are away/);
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    t.same(await outsideItsBox(page), [], `nothing leaves its box at ${width} px`);
  }
  await screenshots(page, 'account-own');
  // The new parts alone, at both widths, to be looked at closely.
  fs.mkdirSync(SCREENS, { recursive: true });
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    for (const id of ['sessions', 'apps', 'your-data', 'delete-account']) {
      await page.locator(`#${id}`).screenshot({ path: path.join(SCREENS, `account-own-${id}-${width}.png`) });
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // A form sent without the page's token changes nothing.
  const forged = await context.request.post(`${s.config.publicUrl}/account/signout-others`, { form: { csrf: 'x'.repeat(43) } });
  t.equal(forged.status(), 403, 'a post without the CSRF token is refused');
  t.ok(Number((await s.db('session').whereNull('ended_at').count({ n: '*' }).first())?.n) > 1, 'no session was ended');

  await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
  await page.waitForURL(/done=others/);
  t.notMatch(await page.locator('#sessions').textContent(), /Firefox on Windows/, 'the other device is signed out');

  await page.getByRole('button', { name: 'Revoke the access of Team wiki' }).click();
  await page.waitForURL(/done=app_revoked/);
  t.match(await page.locator('#apps').textContent(), /No app has signed you in yet/);
  t.equal(
    (await token(s.url, client, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token })).json.error,
    'invalid_grant',
    "the app's refresh token is refused",
  );

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()]);
  t.equal(download.suggestedFilename(), 'gatehouse-my-data.json');
  const data = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
  t.equal(data.account.email, 'ada@example.com');
  t.ok(Array.isArray(data.audit));

  await page.getByLabel('Password', { exact: true }).last().fill(PASSWORD);
  await page.getByLabel('I want to delete my account').check();
  await page.getByRole('button', { name: 'Delete my account' }).click();
  await page.waitForURL(/\/signin\?done=deleted/);
  t.match(await page.locator('main').textContent(), /Your account is deleted/);
  await screenshots(page, 'account-deleted');
  t.notOk(await s.db('user_account').where({ email: 'ada@example.com' }).first(), 'the account is gone');
});

t.test('the console deletes an account (the box ticked), never the last administrator', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('bo@example.com');
  const ref = String((await s.db('user_account').where({ email: 'bo@example.com' }).first('reference_id'))!.reference_id);
  const adminRef = String((await s.db('user_account').where({ email: 'admin@example.com' }).first('reference_id'))!.reference_id);
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);

  await page.goto(`${s.config.publicUrl}/admin/accounts/${adminRef}`);
  await page.getByLabel('Delete this account and everything it holds (cannot be undone)').check();
  await page.getByRole('button', { name: 'Delete account' }).click();
  t.match(await page.locator('main').textContent(), /The last administrator cannot be deleted/i, 'the last administrator stays');

  await page.goto(`${s.config.publicUrl}/admin/accounts/${ref}`);
  await page.getByLabel('Delete this account and everything it holds (cannot be undone)').check();
  await page.getByRole('button', { name: 'Delete account' }).click();
  await page.waitForURL(/\/admin\/accounts\?done=account_deleted/);
  t.match(await page.locator('main').textContent(), /The account is deleted/);
  t.notOk(await s.db('user_account').where({ email: 'bo@example.com' }).first(), 'gone');
  const audit = (await s.db('audit_event').where({ event: 'account_deleted' }).first())!;
  t.equal(audit.account, ref, 'audited by id');
  t.notMatch(String(audit.details), /bo@example/, 'not by email');
});
