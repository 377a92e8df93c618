// What a configuration file manages, in the console, in Chromium: each object the file made is
// labelled with the file and offers no change (no remove, rotate or two-factor button; no nesting
// or delete form on a group page; no signup switch), while hand-made ones keep theirs; a post
// made anyway (a page opened before the apply) is refused with the file named. Every page stays
// inside its box at 360 and 1280 px.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { tempDir, withAdmin } from '../helpers/server';

const FILE = `version: 1
groups:
  - name: staff
    groups: [engineering]
  - name: engineering
actions:
  signup: {guest: false}
oidc_clients:
  - client_id: grafana
    name: Grafana
    secret: {env: GRAFANA_SECRET}
    redirect_uris: [https://grafana.example.com/login/generic_oauth]
saml_sps:
  - entity_id: https://wiki.example.com/saml
    name: Wiki
    acs: [{url: https://wiki.example.com/saml/acs}]
forward_apps:
  - host: photos.example.com
    allowed_groups: [staff]
webhooks:
  - url: https://audit.example.com/gatehouse
    secret: {env: AUDIT_SECRET}
scim_targets:
  - name: wiki
    url: https://wiki.example.com/scim/v2
    token: {env: WIKI_TOKEN}
`;

const text = async (page: Page, selector: string) => ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

t.test('the console labels what a file manages and offers no change to it', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, FILE);
  const env = {
    GRAFANA_SECRET: 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz',
    AUDIT_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    WIKI_TOKEN: 'wiki-token',
  };
  const applied = await cli(s.dataDir, ['config', 'apply', file], { env });
  t.equal(applied.code, 0, applied.err);
  // Hand-made neighbours keep their buttons.
  t.equal((await cli(s.dataDir, ['group', 'create', 'by-hand'])).code, 0);
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', 'hand.example.com'])).code, 0);

  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  const admin = `${s.config.publicUrl}/admin`;
  const label = /Set by gatehouse\.yaml: change it there/;

  const staff = (await s.db('usergroup').where({ name: 'staff' }).first()).reference_id as string;
  await page.goto(`${admin}/groups/${staff}`);
  t.match(await text(page, '#group-managed-by'), new RegExp(`Set by ${file.replace(/[.]/g, '\\.')}: the groups inside it`), 'the group page names the file');
  t.equal(await page.getByLabel('Put a group inside this one').count(), 0, 'no nesting form');
  t.equal(await page.getByRole('button', { name: 'Delete group' }).count(), 0, 'no delete form');
  t.equal(await page.getByRole('button', { name: /Take engineering out of staff/ }).count(), 0, 'no remove button for a group inside');
  t.equal(await page.getByRole('button', { name: 'Add member' }).count(), 1, 'members are still changed here');
  await screenshots(page, 'admin-group-managed');
  const byHand = (await s.db('usergroup').where({ name: 'by-hand' }).first()).reference_id as string;
  await page.goto(`${admin}/groups/${byHand}`);
  t.equal(await page.locator('#group-managed-by').count(), 0);
  t.equal(await page.getByRole('button', { name: 'Delete group' }).count(), 1, 'a hand-made group keeps its delete form');

  await page.goto(`${admin}/clients`);
  const grafana = page.locator('tr', { hasText: 'Grafana' });
  t.match(await grafana.textContent(), label);
  t.equal(await grafana.getByRole('button').count(), 0, 'no remove, rotate or two-factor button');
  await screenshots(page, 'admin-clients-managed');

  await page.goto(`${admin}/saml`);
  const wiki = page.locator('tr', { hasText: 'Wiki' });
  t.match(await wiki.textContent(), label);
  t.same(
    (await wiki.getByRole('button').allTextContents()).map((x) => x.trim()),
    ['Sign in'],
    'only the sign-in button',
  );

  await page.goto(`${admin}/apps`);
  t.match(await page.locator('tr', { hasText: 'photos.example.com' }).textContent(), label);
  t.equal(await page.locator('tr', { hasText: 'photos.example.com' }).getByRole('button').count(), 0);
  t.equal(await page.locator('tr', { hasText: 'hand.example.com' }).getByRole('button', { name: 'Remove' }).count(), 1, 'a hand-made app keeps its button');

  await page.goto(`${admin}/webhooks`);
  const hook = page.locator('tr', { hasText: 'audit.example.com' });
  t.match(await hook.textContent(), label);
  t.equal(await hook.getByRole('button').count(), 0);

  await page.goto(`${admin}/provisioning`);
  const target = page.locator('tr', { hasText: 'wiki.example.com/scim' });
  t.match(await target.textContent(), label);
  t.same(
    (await target.getByRole('button').allTextContents()).map((x) => x.trim()),
    ['Sync'],
    'a sync changes nothing the file says',
  );

  await page.goto(`${admin}/signup`);
  t.match(await text(page, '#signup-managed-by'), new RegExp(`Set by ${file.replace(/[.]/g, '\\.')}: who may sign up`));
  t.equal(await page.getByRole('button', { name: /guest signup/ }).count(), 0, 'no signup switch');
  await screenshots(page, 'admin-signup-managed');

  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    for (const where of [`groups/${staff}`, 'clients', 'saml', 'apps', 'webhooks', 'provisioning', 'signup']) {
      await page.goto(`${admin}/${where}`);
      t.same(await outsideItsBox(page), [], `/admin/${where} at ${width} px: everything inside its box`);
    }
  }

  // A form opened before the file managed the group, posted after: refused, the file named.
  await page.goto(`${admin}/groups/${byHand}`);
  fs.writeFileSync(file, FILE.replace('  - name: engineering\n', '  - name: engineering\n  - name: by-hand\n'));
  t.equal((await cli(s.dataDir, ['config', 'apply', file], { env })).code, 0);
  await page.getByLabel(/Delete by-hand/).check();
  await page.getByRole('button', { name: 'Delete group' }).click();
  await page.waitForLoadState();
  t.match(await text(page, '[role=alert]'), /managed by the configuration file .*gatehouse\.yaml: change it there/);
  t.equal((await cli(s.dataDir, ['group', 'show', 'by-hand'])).code, 0, 'the group is still there');
});
