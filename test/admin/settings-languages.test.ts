// The console's settings pages (src/http/pages/admin/settings.ts) in German and French, in
// Chromium: an administrator whose browser asks for de (then fr) opens guest signup open and
// closed (sign-in by mail off and on), the same switches set by a configuration file, the look,
// the signing keys after a rotation, and the audit log with rows, filtered, and refusing a bad
// filter: no English word left outside commands, ids and event names, nothing out of its box at
// 360 and 1280 px, each page photographed (test-results/pages/admin-settings-*-de|fr).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Page } from 'playwright-core';
import { englishLeft, launch, outsideItsBox, screenshots, signedInIn } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { PASSWORD, tempDir, withAdmin } from '../helpers/server';

t.test('the settings pages in de and fr: no English left, nothing out of its box', async (t) => {
  const s = await withAdmin(t);
  const ok = async (args: string[], env?: NodeJS.ProcessEnv) => {
    const r = await cli(s.dataDir, args, { env });
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  };
  // Two keys (one signing, one verifying) and audit rows of more than one kind.
  await ok(['keys', 'rotate']);
  await ok(['user', 'create', '--email', 'eve@example.com', '--name', 'Eve', '--password-env', 'PW'], { PW: PASSWORD });
  await ok(['group', 'create', 'editors']);

  const browser = await launch(t);
  /** The administrator, signed in from a browser that asks for `language`. */
  const signedIn = (language: string): Promise<Page> => signedInIn(browser, s.url, language, 'admin@example.com', PASSWORD);
  const check = async (page: Page, language: string, name: string) => {
    t.equal(await page.getAttribute('html', 'lang'), language, `${name} in ${language}`);
    // The console's navigation above the page is the console kit's (kit.ts), not this file's words.
    const nav = (await page.locator('nav.console a').allTextContents()).map((x) => x.trim());
    const left = (await englishLeft(page)).filter((w) => !nav.includes(w));
    t.same(left, [], `${name} in ${language}: no English left`);
    for (const width of [360, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      t.same(await outsideItsBox(page), [], `${name} in ${language} at ${width} px: everything inside its box`);
    }
    await screenshots(page, `admin-settings-${name}-${language}`);
    await page.setViewportSize({ width: 1280, height: 800 });
  };

  for (const language of ['de', 'fr'] as const) {
    await ok(['action', 'set-permission', 'signup', '--guest', 'on']);
    await ok(['action', 'set-permission', 'signin_by_mail', '--guest', 'off']);
    const page = await signedIn(language);
    const visit = async (name: string, address: string) => {
      await page.goto(`${s.url}${address}`);
      await check(page, language, name);
    };

    await visit('signup-open', '/admin/signup');
    t.equal(await page.locator('form[action="/admin/signup"] button').count(), 1, 'the switch to close it');
    await ok(['action', 'set-permission', 'signup', '--guest', 'off']);
    await ok(['action', 'set-permission', 'signin_by_mail', '--guest', 'on']);
    await visit('signup-closed', '/admin/signup');
    t.equal(await page.locator('form[action="/admin/signup"] input[name="confirm"]').count(), 1, 'opening it asks to confirm');

    await visit('look', '/admin/look');
    await visit('keys', '/admin/keys');
    t.equal(await page.locator('tbody tr').count(), 2, 'the signing key and the one still verifying');
    await visit('audit', '/admin/audit');
    t.ok((await page.locator('tbody tr').count()) > 2, 'audit rows');
    await visit('audit-filtered', '/admin/audit?event=group_created&days=30');
    t.equal(await page.locator('tbody tr').count(), 1, 'the one group made');
    await visit('audit-bad-days', '/admin/audit?days=0');
    t.equal(await page.locator('.notice.error').count(), 1, 'a bad number of days refused');
    await visit('audit-no-account', '/admin/audit?email=nobody%40example.com');
    t.equal(await page.locator('.notice.error').count(), 1, 'an unknown address refused');
    await page.context().close();
  }

  // Both switches set by a configuration file (its whole path shown): no buttons, the file named.
  const file = path.join(tempDir(t), 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\nactions:\n  signup: {guest: false}\n  signin_by_mail: {guest: true}\n');
  await ok(['config', 'apply', file]);
  for (const language of ['de', 'fr'] as const) {
    const page = await signedIn(language);
    await page.goto(`${s.url}/admin/signup`);
    t.match(await page.locator('#signup-managed-by').textContent(), file, 'the file named');
    t.equal(await page.locator('main form').count(), 0, 'no switch to press');
    await check(page, language, 'signup-managed');
    await page.context().close();
  }
});
