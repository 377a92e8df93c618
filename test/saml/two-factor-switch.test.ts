// A service provider's two-factor rule changed after it was added: `saml sp set` and the console's switch, audited.
import t from 'tap';
import { launch } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { withAdmin } from '../helpers/server';
import { addSp, nodeSamlSp } from '../helpers/saml';

t.test('saml sp set --two-factor on|off, and the console switch', async (t) => {
  const s = await withAdmin(t);
  const sp = await addSp(t, s, (await nodeSamlSp(s)).metadata);
  const on = await cli(s.dataDir, ['--json', 'saml', 'sp', 'set', sp.id, '--two-factor', 'on']);
  t.equal(on.code, 0, on.err);
  t.equal(on.json.two_factor, true);
  const byEntity = await cli(s.dataDir, ['--json', 'saml', 'sp', 'set', sp.entity_id, '--two-factor', 'off']);
  t.equal(byEntity.json.two_factor, false, 'named by its entity id too');
  const bad = await cli(s.dataDir, ['saml', 'sp', 'set', sp.id, '--two-factor', 'yes']);
  t.not(bad.code, 0);
  t.match(bad.err, /--two-factor must be on or off/);
  const missing = await cli(s.dataDir, ['saml', 'sp', 'set', 'no-such-sp', '--two-factor', 'on']);
  t.not(missing.code, 0);

  const browser = await launch(t);
  const admin = await (await browser.newContext()).newPage();
  await admin.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(admin, 'admin@example.com');
  await admin.waitForURL(/\/account/);
  await admin.goto(`${s.config.publicUrl}/admin/saml`);
  await admin.getByRole('button', { name: /^Require two factors for / }).click();
  await admin.waitForURL(/done=saml_changed/);
  t.equal((await cli(s.dataDir, ['--json', 'saml', 'sp', 'show', sp.id])).json.two_factor, true, 'the console switched it on');
  await admin.getByRole('button', { name: /^Allow one factor for / }).click();
  await admin.waitForURL(/done=saml_changed/);
  t.equal((await cli(s.dataDir, ['--json', 'saml', 'sp', 'show', sp.id])).json.two_factor, false, 'and off');
  const audit = JSON.stringify((await cli(s.dataDir, ['--json', 'audit'])).json);
  t.equal(audit.match(/"saml_sp_changed"/g)?.length, 4, 'each change is audited');
});
