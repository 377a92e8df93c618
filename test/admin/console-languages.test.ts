// The administrators' console in German and French, in Chromium: an administrator whose browser
// asks for de (then fr) opens every console page this branch converted (accounts and an account,
// invitations and one just sent, groups and a group, OIDC clients and a secret just made, apps,
// SAML apps, provisioning, directory sources and a sync's report, webhooks with a failing
// endpoint), each filled with rows: no English word left outside the values people typed, nothing
// out of its box at 360 and 1280 px, and each page photographed (test-results/pages/admin-*-de|fr).
import t from 'tap';
import type { Page } from 'playwright-core';
import { englishLeft, launch, outsideItsBox, screenshots, signedInIn } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { PASSWORD, withAdmin } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, groupDn, groupLdif, personDn, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';

const LOOPBACK = ['--webhook-allow-private', 'loopback'];

t.test('every converted console page in de and fr: no English left, nothing out of its box', async (t) => {
  const slapd = await startSlapd(t);
  await slapd.add(
    personLdif('alice', { cn: 'Alice Liddell' }) +
      personLdif('bob', { cn: 'Bob Builder' }) +
      groupLdif('engineers', [personDn('alice'), personDn('bob')]) +
      groupLdif('staff', [groupDn('engineers')]),
  );
  const s = await withAdmin(t);
  const ok = async (args: string[], o: { stdin?: string; env?: NodeJS.ProcessEnv } = {}) => {
    const r = await cli(s.dataDir, ['--json', ...args], o);
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    return r.json;
  };
  // Something in every table: a person, groups inside groups, clients, an app, a SAML app, SCIM
  // tokens and a push target, a webhook that cannot deliver, a synced directory.
  await ok(['user', 'create', '--email', 'eve@example.com', '--name', 'Eve', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  await ok(['group', 'create', 'editors']);
  await ok(['group', 'create', 'readers']);
  await ok(['group', 'add', 'editors', 'eve@example.com']);
  await ok(['group', 'add', 'editors', 'admin@example.com']);
  await ok(['group', 'add-group', 'readers', 'editors']);
  await ok(['client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.com/callback', '--allowed-group', 'editors']);
  await ok(['client', 'add', '--name', 'Reports robot', '--credentials', '--audience', 'https://reports.example.com']);
  await ok(['app', 'add', '--host', 'grafana.example.com', '--allow-group', 'editors']);
  await ok(['saml', 'sp', 'add', '--entity-id', 'https://files.example.com/saml', '--acs-url', 'https://files.example.com/saml/acs', '--name', 'Files']);
  await ok(['scim', 'token', 'add', '--name', 'entra']);
  await ok([...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim/v2', '--token-stdin', '--name', 'crm'], { stdin: 'token-1\n' });
  await ok([...LOOPBACK, 'webhook', 'add', '--url', 'http://127.0.0.1:9/hooks/gatehouse', '--description', 'Audit mirror']);
  const source = ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX];
  await ok([...source, '--every', '1h'], { env: { BINDPW: ADMIN_PASSWORD } });
  await ok(['source', 'sync', 'corp']);
  const eve = (await ok(['user', 'show', 'eve@example.com'])).reference_id as string;
  const alice = (await ok(['user', 'show', 'alice@example.org'])).reference_id as string;
  const readers = (await ok(['group', 'show', 'readers'])).reference_id as string;
  const staff = (await ok(['group', 'show', 'staff'])).reference_id as string;

  const browser = await launch(t);
  const check = async (page: Page, language: string, name: string) => {
    t.equal(await page.getAttribute('html', 'lang'), language, `${name} in ${language}`);
    t.same(await englishLeft(page), [], `${name} in ${language}: no English left`);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `${name} in ${language} at ${width} px: everything inside its box`);
    }
    await screenshots(page, `admin-${name}-${language}`);
    await page.setViewportSize({ width: 1280, height: 800 });
  };

  for (const language of ['de', 'fr'] as const) {
    const page = await signedInIn(browser, s.url, language, 'admin@example.com', PASSWORD);
    const context = page.context();

    const pages: Array<[string, string]> = [
      ['accounts', '/admin/accounts'],
      ['account', `/admin/accounts/${eve}`],
      ['account-synced', `/admin/accounts/${alice}`],
      ['invitations', '/admin/invitations'],
      ['groups', '/admin/groups'],
      ['group', `/admin/groups/${readers}`],
      ['group-synced', `/admin/groups/${staff}`],
      ['clients', '/admin/clients'],
      ['apps', '/admin/apps'],
      ['saml', '/admin/saml'],
      ['provisioning', '/admin/provisioning'],
      ['sources', '/admin/sources'],
      ['webhooks', '/admin/webhooks'],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${s.url}${path}`);
      await check(page, language, name);
    }

    // The answers to a post: an invitation sent (its link shown), a client's secret, a sync's report, a change's message.
    await page.goto(`${s.url}/admin/invitations`);
    await page.locator('#f-email').fill(`kim-${language}@example.com`);
    await page.locator('form[action="/admin/invitations"] button[type="submit"]').click();
    await page.locator('#h-invited').waitFor();
    await check(page, language, 'invited');

    await page.goto(`${s.url}/admin/clients`);
    await page.locator('#f-name').fill(`Intranet ${language}`);
    await page.locator('#f-redirect').fill('https://intranet.example.com/callback');
    await page.locator('form[action="/admin/clients"] button[type="submit"]').click();
    await page.locator('#client-secret').waitFor();
    await check(page, language, 'client-secret');

    await page.goto(`${s.url}/admin/sources`);
    await page.locator('form[action="/admin/sources/sync"] button[type="submit"]').click();
    await page.locator('#sync-report').waitFor();
    await check(page, language, 'sources-synced');

    await page.goto(`${s.url}/admin/groups/${readers}`);
    await page.locator('form[action$="/groups/remove"] button[type="submit"]').click();
    await page.waitForURL(/done=group_unnested/);
    await check(page, language, 'group-changed');
    await ok(['group', 'add-group', 'readers', 'editors']);
    await context.close();
  }
});
