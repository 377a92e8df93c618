// The console's SAML screen in Chromium: an administrator pastes an SP's metadata (node-saml's),
// limits it to a group, starts a sign-in to it from Gatehouse (IdP-initiated: a Response without
// InResponseTo, which the SP accepts), posts an AuthnRequest from the SP's own site, rotates and retires the certificate, and removes the SP.
// Photographed at 360 and 1280 px.
import t from 'tap';
import { launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { ACS, idpCerts, nodeSamlSp } from '../helpers/saml';
import { withAdmin } from '../helpers/server';

t.test('add a SAML app by pasting its metadata, sign in to it from Gatehouse, rotate, remove', async (t) => {
  const s = await withAdmin(t);
  await cli(s.dataDir, ['group', 'create', 'staff']);
  await cli(s.dataDir, ['group', 'add', 'staff', 'admin@example.com']);
  const sp = await nodeSamlSp(s, { extra: { validateInResponseTo: 'never' as never } });
  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);

  await page.goto(`${s.config.publicUrl}/admin/saml`);
  await page.getByLabel("The app's metadata").fill(sp.metadata);
  await page.getByLabel('Name', { exact: true }).fill('Wiki');
  await page.getByLabel('staff').check();
  await page.getByRole('button', { name: 'Add SAML app' }).click();
  await page.getByText('The SAML app is added').waitFor();
  const listed = (await cli(s.dataDir, ['--json', 'saml', 'sp', 'list'])).json.service_providers;
  t.match(listed, [{ name: 'Wiki', entity_id: sp.config.issuer, allowed_groups: ['staff'], acs_urls: [ACS] }], 'the shell sees what the console added');
  await screenshots(page, 'console-saml');

  // A bad paste says why, on the same page.
  await page.getByLabel("The app's metadata").fill('<!DOCTYPE x><x/>');
  await page.getByRole('button', { name: 'Add SAML app' }).click();
  await page.getByText(/DOCTYPE/).waitFor();

  // IdP-initiated: the console's button posts the Response to the registered ACS URL.
  let posted: string | undefined;
  await page.route(`${ACS}`, async (route) => {
    posted = new URLSearchParams(route.request().postData() ?? '').get('SAMLResponse') ?? undefined;
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'at the app' });
  });
  await page.goto(`${s.config.publicUrl}/admin/saml`);
  await page.getByRole('button', { name: 'Sign in to Wiki' }).click();
  await page.waitForURL(ACS);
  t.ok(posted, 'a Response arrived at the ACS URL');
  t.notMatch(Buffer.from(posted!, 'base64').toString(), /InResponseTo/, 'unsolicited: no InResponseTo');
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted! });
  t.equal(profile!.nameID, 'admin@example.com', 'node-saml accepts the unsolicited Response');

  // An AuthnRequest posted from the SP's own site (another site: the SameSite=Lax session cookie is
  // not sent with that POST) still finds the session, through the hop to a same-site page.
  const form = await sp.saml.getAuthorizeFormAsync('from-the-app', undefined, {});
  const value = /name="SAMLRequest" value="([^"]+)"/.exec(form)![1]!;
  await page.route('http://sp.example.test/start', (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: `<form method="post" action="${s.config.publicUrl}/saml/sso"><input type="hidden" name="SAMLRequest" value="${value}"><input type="hidden" name="RelayState" value="from-the-app"><button>Go</button></form>`,
    }),
  );
  posted = undefined;
  await page.goto('http://sp.example.test/start');
  await page.getByRole('button', { name: 'Go' }).click();
  await page.waitForURL(ACS);
  t.ok(posted, 'a cross-site POST of the request still ends at the ACS URL with a Response');
  t.ok((await sp.saml.validatePostResponseAsync({ SAMLResponse: posted! })).profile, 'which node-saml accepts');

  // Rotation from the console: the next certificate, then retiring the current one.
  await page.goto(`${s.config.publicUrl}/admin/saml`);
  const before = await idpCerts(s);
  await page.getByLabel('List a new certificate beside the current one').check();
  await page.getByRole('button', { name: 'Add the next certificate' }).click();
  await page.getByText('The next certificate is listed').waitFor();
  t.equal((await idpCerts(s)).length, 2);
  await page.getByLabel(/Sign with the next one from now on/).check();
  await page.getByRole('button', { name: 'Retire the current certificate' }).click();
  await page.getByText('The next certificate signs from now on').waitFor();
  const after = await idpCerts(s);
  t.equal(after.length, 1);
  t.not(after[0], before[0], 'a new certificate signs');

  await page.getByLabel('Remove Wiki').check();
  await page.getByRole('button', { name: 'Remove', exact: true }).click();
  await page.getByText('The SAML app is removed').waitFor();
  t.same((await cli(s.dataDir, ['--json', 'saml', 'sp', 'list'])).json.service_providers, []);
});
