// Groups inside groups in the console, in Chromium: an administrator puts engineering inside staff
// with the group page's form, sees it listed both ways (staff's "Groups inside", engineering's
// "Inside of") and on a member's page as held through engineering, takes it out again; a cycle is
// refused on the page (409, its reason said) and changes nothing; administrators offers no form
// and says why; a post without the CSRF token is refused (403) and changes nothing. Every page
// stays inside its box at 360, 390 and 1280 px.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { PASSWORD, withAdmin, type TestServer } from '../helpers/server';

const insideOf = async (s: TestServer, group: string) => {
  const r = await cli(s.dataDir, ['--json', 'group', 'show', group]);
  return {
    groups: (r.json.groups as Array<{ name: string }>).map((g) => g.name),
    memberOf: (r.json.member_of as Array<{ name: string }>).map((g) => g.name),
  };
};

const text = async (page: Page, selector: string) => ((await page.locator(selector).textContent()) ?? '').replace(/\s+/g, ' ').trim();

t.test('groups inside groups from the group page: add, listed both ways, remove; a cycle refused; administrators; CSRF', async (t) => {
  const s = await withAdmin(t);
  const env = { PW: PASSWORD };
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--password-env', 'PW'], { env })).code, 0);
  for (const name of ['engineering', 'staff']) t.equal((await cli(s.dataDir, ['group', 'create', name])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'add', 'engineering', 'ada@example.com'])).code, 0);
  const ref = async (name: string) => (await s.db('usergroup').where({ name }).first()).reference_id as string;
  const [staff, engineering, administrators] = [await ref('staff'), await ref('engineering'), await ref('administrators')];
  const ada = (await s.db('user_account').where({ email_key: 'ada@example.com' }).first()).reference_id as string;

  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  const base = `${s.config.publicUrl}/admin/groups`;

  // Put engineering inside staff with the form.
  await page.goto(`${base}/${staff}`);
  t.match(await text(page, '#h-nested + p'), /members of a group inside staff are members of staff too/);
  const offered = await page.getByLabel('Put a group inside this one').locator('option').allTextContents();
  t.ok(offered.includes('engineering'), 'a managed group is offered');
  t.notOk(offered.includes('staff'), 'not the group itself');
  t.notOk(offered.includes('users'), 'not users (it holds every account)');
  await page.getByLabel('Put a group inside this one').selectOption({ label: 'engineering' });
  await page.getByRole('button', { name: 'Add group' }).click();
  await page.waitForURL(/done=group_nested/);
  t.match(await text(page, '.notice.success'), /The group is inside this one/);
  const nestedRows = page.locator('section[aria-labelledby="h-nested"] tbody tr');
  t.same(await nestedRows.allTextContents().then((rows) => rows.map((r) => r.replace(/\s+/g, ' ').trim())), ['engineering Remove']);
  t.notOk(
    (await page.getByLabel('Put a group inside this one').locator('option').allTextContents()).includes('engineering'),
    'a group already inside is not offered again',
  );
  t.same(await insideOf(s, 'staff'), { groups: ['engineering'], memberOf: [] }, 'the store holds it');
  await screenshots(page, 'admin-group-nested');

  // Listed the other way: engineering is inside staff, and Ada is in staff through engineering.
  await page.getByRole('link', { name: 'engineering', exact: true }).click();
  await page.waitForURL(new RegExp(`/admin/groups/${engineering}$`));
  t.equal(await text(page, '#group-inside-of'), 'staff: the members of engineering are members there too.');
  t.equal(await page.locator('#group-inside-of a').getAttribute('href'), `/admin/groups/${staff}`);
  await screenshots(page, 'admin-group-inside-of');
  await page.goto(`${s.config.publicUrl}/admin/accounts/${ada}`);
  t.equal(await text(page, '#account-groups'), 'engineering, staff (through engineering), users', 'held through a group: said so');
  await screenshots(page, 'admin-account-indirect-group');

  // Pages stay inside their boxes at phone and desktop widths.
  for (const width of [360, 390, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    for (const path of [`groups/${staff}`, `groups/${engineering}`, `groups/${administrators}`, `accounts/${ada}`]) {
      await page.goto(`${s.config.publicUrl}/admin/${path}`);
      t.same(await outsideItsBox(page), [], `/admin/${path} at ${width} px: everything inside its box`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // A cycle: staff inside engineering, while engineering is inside staff. Refused on the page, nothing changed.
  await page.goto(`${base}/${engineering}`);
  await page.getByLabel('Put a group inside this one').selectOption({ label: 'staff' });
  const [cycle] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Add group' }).click()]);
  t.equal(cycle.status(), 409, 'a cycle: 409');
  t.equal(await text(page, '[role="alert"]'), 'A cycle: engineering is already inside staff');
  t.same(await insideOf(s, 'engineering'), { groups: [], memberOf: ['staff'] }, 'nothing changed');
  t.same(await insideOf(s, 'staff'), { groups: ['engineering'], memberOf: [] });
  await screenshots(page, 'admin-group-cycle');

  // A post without the CSRF token (as another site's form would send): refused, nothing changed.
  const forgeries: Array<Record<string, string>> = [{ group: 'staff' }, { group: 'staff', csrf: 'x'.repeat(43) }];
  for (const form of forgeries) {
    const forged = await page.request.post(`${base}/${engineering}/groups/add`, { form, headers: { origin: s.config.publicUrl }, maxRedirects: 0 });
    t.equal(forged.status(), 403, `forged (${form.csrf ? 'a wrong token' : 'no token'}): 403`);
  }
  const removeForged = await page.request.post(`${base}/${staff}/groups/remove`, { form: { group: engineering }, maxRedirects: 0 });
  t.equal(removeForged.status(), 403, 'a forged remove: 403');
  t.same(await insideOf(s, 'staff'), { groups: ['engineering'], memberOf: [] }, 'nothing changed');

  // Take engineering out of staff again.
  await page.goto(`${base}/${staff}`);
  await page.getByRole('button', { name: 'Take engineering out of staff' }).click();
  await page.waitForURL(/done=group_unnested/);
  t.match(await text(page, '.notice.success'), /no longer inside this one/);
  t.equal(await nestedRows.count(), 0);
  t.match(await text(page, 'section[aria-labelledby="h-nested"]'), /No groups inside\./);
  t.same(await insideOf(s, 'staff'), { groups: [], memberOf: [] });
  await page.goto(`${s.config.publicUrl}/admin/accounts/${ada}`);
  t.equal(await text(page, '#account-groups'), 'engineering, users', 'no longer in staff');

  // administrators: no form, and why.
  await page.goto(`${base}/${administrators}`);
  t.equal(await page.getByLabel('Put a group inside this one').count(), 0, 'no add form');
  t.match(await text(page, 'section[aria-labelledby="h-nested"]'), /No group can go inside administrators: administrators are named people/);
  await screenshots(page, 'admin-group-administrators');
  // Forged past the page (a valid token): the core still refuses it, 403, shown on the page.
  const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value')) ?? '';
  const intoAdmins = await page.request.post(`${base}/${administrators}/groups/add`, {
    form: { csrf, group: engineering },
    headers: { origin: s.config.publicUrl },
    maxRedirects: 0,
  });
  t.equal(intoAdmins.status(), 403, 'nothing goes inside administrators');
  t.match(await intoAdmins.text(), /role="alert">No group goes inside administrators: it holds named people only</, 'the reason, on the page');
  t.same(await insideOf(s, 'administrators'), { groups: [], memberOf: [] });
});

t.test('a group counts its members both ways: directly, and in all through the groups inside it', async (t) => {
  const s = await withAdmin(t);
  const env = { PW: PASSWORD };
  for (const email of ['ada@example.com', 'bob@example.com', 'cy@example.com']) {
    t.equal((await cli(s.dataDir, ['user', 'create', '--email', email, '--password-env', 'PW'], { env })).code, 0);
  }
  for (const args of [
    ['group', 'create', 'staff'],
    ['group', 'create', 'engineering'],
    ['group', 'create', 'platform'],
    ['group', 'add-group', 'staff', 'engineering'],
    ['group', 'add-group', 'engineering', 'platform'],
    ['group', 'add', 'engineering', 'ada@example.com'],
    ['group', 'add', 'platform', 'bob@example.com'],
    // In two ways (directly and through platform): counted once.
    ['group', 'add', 'engineering', 'bob@example.com'],
    ['group', 'add', 'staff', 'cy@example.com'],
  ]) {
    t.equal((await cli(s.dataDir, args)).code, 0, args.join(' '));
  }
  const shown = (await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json;
  t.equal(shown.member_count, 1, 'cy, directly');
  t.equal(shown.all_member_count, 3, 'ada and bob through engineering and platform, each once');

  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  await page.goto(`${s.config.publicUrl}/admin/groups`);
  const row = async (name: string) =>
    (
      await page
        .locator('tr', { has: page.getByRole('link', { name, exact: true }) })
        .locator('td')
        .allTextContents()
    )
      .slice(1, 3)
      .map((x) => x.trim());
  t.same(await row('staff'), ['1', '3'], 'staff: 1 direct, 3 in all');
  t.same(await row('engineering'), ['2', '2'], 'engineering: bob in two ways, once');
  t.same(await row('platform'), ['1', '1']);
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    t.same(await outsideItsBox(page), [], `at ${width} px: inside its box`);
  }
  await screenshots(page, 'admin-groups-counts');

  await page.goto(`${s.config.publicUrl}/admin/groups/${shown.reference_id}`);
  t.equal(
    await text(page, '#group-member-counts'),
    '1 person directly in staff; 3 people in all, with the members of the groups inside it (at any depth, each counted once).',
  );
  await screenshots(page, 'admin-group-counts');
  const platform = (await cli(s.dataDir, ['--json', 'group', 'show', 'platform'])).json.reference_id;
  await page.goto(`${s.config.publicUrl}/admin/groups/${platform}`);
  t.equal(await text(page, '#group-member-counts'), '1 person directly in platform.', 'no groups inside: one count');
});
