// The console's directory sources, in Chromium, against Debian's slapd: the screen lists a source
// (schedule, never synced); Sync now (a post without the CSRF token is refused) answers with the
// report (counts, and the entries left out with the reason), and the table then says ok with what
// it holds; a directory that is down is said on the page and in the table (failed, with the
// error), and nobody is disabled for it. A synced person's page and a synced group's page say
// where they come from and offer no control the core would refuse; a post made anyway is refused
// by the core, its reason on the page. The group writes the core refuses for a source's groups
// (shell, record API), while the sync itself still renames and removes them. Every page stays
// inside its box at 360 and 1280 px.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { launch, outsideItsBox, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { fillSignin } from '../helpers/oidc';
import { withAdmin } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, groupDn, groupLdif, personDn, personLdif, startSlapd, SUFFIX, type Slapd } from '../helpers/slapd';

type S = Awaited<ReturnType<typeof withAdmin>>;

/** A time as the console writes it in English (look().tr.dateTime): Dec 5, 2026, 11:15 AM UTC. */
const WHEN = String.raw`[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M UTC`;

const text = async (page: Page, selector: string) => ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

const addSource = (s: S, slapd: Slapd, extra: string[] = []) =>
  cli(
    s.dataDir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX, ...extra],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );

/** Alice, Bob and Carol; engineers (Alice, Bob) inside staff (Carol); Dave, whose mail is an account's made here; Erin, with no mail. */
async function directory(t: Test) {
  const slapd = await startSlapd(t);
  await slapd.add(
    personLdif('alice', { cn: 'Alice Liddell' }) +
      personLdif('bob', { cn: 'Bob Builder' }) +
      personLdif('carol', { cn: 'Carol Danvers' }) +
      personLdif('dave', { cn: 'Dave Lister', mail: 'admin@example.com' }) +
      [`dn: uid=erin,ou=people,${SUFFIX}`, 'objectClass: inetOrgPerson', 'uid: erin', 'cn: Erin', 'sn: erin', '', ''].join('\n') +
      groupLdif('engineers', [personDn('alice'), personDn('bob')]) +
      groupLdif('staff', [personDn('carol'), groupDn('engineers')]),
  );
  return slapd;
}

t.test('the directory sources screen: listed, Sync now and its report, a directory that is down; synced people and groups labelled', async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  const added = await addSource(s, slapd, ['--every', '1h']);
  t.equal(added.code, 0, added.err);

  const browser = await launch(t);
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${s.config.publicUrl}/signin`);
  await fillSignin(page, 'admin@example.com');
  await page.waitForURL(/\/account/);
  const admin = `${s.config.publicUrl}/admin`;

  // In the console's navigation; the source listed, never synced yet.
  await page.goto(admin);
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Directory sources' }).click();
  await page.waitForURL(/\/admin\/sources$/);
  t.equal(await page.locator('nav.console a[aria-current="page"]').textContent(), 'Directory sources');
  const row = page.locator('tbody tr', { hasText: 'corp' });
  const cells = async () => (await row.locator('td').allInnerTexts()).map((x) => x.replace(/\s+/g, ' ').trim());
  const before = await cells();
  t.match(before[0], new RegExp(`corp ${slapd.url.replace(/[.]/g, '\\.')}/? ${SUFFIX}`), 'name, URL and base DN');
  t.same(before.slice(1, 4), ['0', '0', '0'], 'no people, none gone, no groups yet');
  t.match(before[4], new RegExp(`^every 1h next ${WHEN}$`), 'the schedule');
  t.equal(before[5], 'never');
  t.match(
    await text(page, 'section[aria-labelledby="h-shell"]'),
    /gatehouse source add ldap \\--name corp \\--url .*gatehouse source remove NAME/,
    'adding and removing: the shell, with the commands',
  );
  t.equal(await page.getByRole('button', { name: /Remove|Add/ }).count(), 0, 'no add or remove on the page');
  await screenshots(page, 'admin-sources');

  // A post without the CSRF token (as another site's form would send): refused, nothing synced.
  const forged = await page.request.post(`${admin}/sources/sync`, { form: { source: 'corp' }, headers: { origin: s.config.publicUrl }, maxRedirects: 0 });
  t.equal(forged.status(), 403, 'no CSRF token: 403');
  t.equal((await cli(s.dataDir, ['--json', 'source', 'show', 'corp'])).json.last_sync_at, null, 'nothing synced');

  // Sync now: the report answers the post.
  const [synced] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    row.getByRole('button', { name: 'Sync now: corp' }).click(),
  ]);
  t.equal(synced.status(), 200);
  await page.locator('#sync-report').waitFor();
  t.equal(await text(page, '#h-synced'), 'corp is synced');
  t.match(await text(page, '#report-people'), /^3 created, 0 updated, 0 unchanged, 0 disabled \(gone\), 0 back$/);
  t.match(await text(page, '#report-groups'), /^2 created, 0 renamed, 0 removed$/);
  const left = (await page.locator('#sync-report tbody tr').allTextContents()).map((x) => x.replace(/\s+/g, ' ').trim());
  t.equal(await text(page, '#report-skipped'), 'Left out: 2 entries');
  t.equal(left.length, 2, 'each with the reason');
  t.ok(
    left.some((x) => x.startsWith(personDn('erin')) && /no mail/.test(x)),
    'erin: no mail',
  );
  t.ok(
    left.some((x) => x.startsWith(personDn('dave')) && /an account with this mail exists already/.test(x)),
    'dave: his mail is a local account',
  );
  const after = await cells();
  t.same(after.slice(1, 4), ['3', '0', '2'], 'the table holds what the sync brought');
  t.match(after[5], new RegExp(`^ok ${WHEN} 3 created, 0 updated, 0 disabled, 2 left out$`));
  await screenshots(page, 'admin-sources-synced');
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    t.same(await outsideItsBox(page), [], `the sync report at ${width} px: everything inside its box`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  const events = (await cli(s.dataDir, ['--json', 'audit', '--limit', '50'])).json.events as Array<{ event: string }>;
  t.ok(
    events.some((e) => e.event === 'source_synced'),
    'audited',
  );

  // A synced person's page: labelled, no username form (the core refuses it); the rest stays.
  const alice = (await s.db('user_account').where({ email_key: 'alice@example.org' }).first()).reference_id as string;
  await page.goto(`${admin}/accounts/${alice}`);
  t.equal(
    await text(page, '#account-source'),
    'From the directory source corp: change it there. Its name, email address, username and password are the directory’s.',
  );
  t.equal(await page.locator('#account-source a').getAttribute('href'), '/admin/sources');
  t.equal(await page.getByLabel('New username').count(), 0, 'no username form');
  t.equal(await page.getByRole('button', { name: 'Change username' }).count(), 0);
  t.equal(await page.getByRole('button', { name: 'Disable' }).count(), 1, 'what the core allows stays');
  await screenshots(page, 'admin-account-from-source');
  // Posted anyway (a page opened before the sync): the core refuses, its reason on the page.
  const csrf = (await page.locator('input[name="csrf"]').first().getAttribute('value')) ?? '';
  const rename = await page.request.post(`${admin}/accounts/${alice}/username`, {
    form: { csrf, username: 'queen' },
    headers: { origin: s.config.publicUrl },
    maxRedirects: 0,
  });
  t.equal(rename.status(), 403);
  t.match(await rename.text(), /role="alert">This account comes from the directory source corp: its username is changed there</);
  const local = (await s.db('user_account').where({ email_key: 'admin@example.com' }).first()).reference_id as string;
  await page.goto(`${admin}/accounts/${local}`);
  t.equal(await page.locator('#account-source').count(), 0, 'an account made here: no label');
  t.equal(await page.getByRole('button', { name: 'Change username' }).count(), 1, 'and its username form');

  // A synced group's page: labelled, no member, nesting or delete controls.
  const ref = async (name: string) => (await s.db('usergroup').where({ name }).first()).reference_id as string;
  const [engineers, staff] = [await ref('engineers'), await ref('staff')];
  await page.goto(`${admin}/groups/${staff}`);
  t.equal(
    await text(page, '#group-source'),
    'From the directory source corp: change it there. Its name, its members and the groups inside it are the directory’s.',
  );
  t.equal(await page.getByRole('button', { name: 'Add member' }).count(), 0, 'no add-member form');
  t.equal(await page.getByRole('button', { name: /^Remove/ }).count(), 0, 'no remove button for a member');
  t.equal(await page.getByRole('button', { name: /Take engineers out of staff/ }).count(), 0, 'no remove button for a group inside');
  t.equal(await page.getByLabel('Put a group inside this one').count(), 0, 'no nesting form');
  t.equal(await page.getByRole('button', { name: 'Delete group' }).count(), 0, 'no delete form');
  t.match(await text(page, 'section[aria-labelledby="h-members"]'), /carol@example\.org Carol Danvers/, 'its members, listed');
  t.match(await text(page, 'section[aria-labelledby="h-nested"]'), /engineers/, 'the groups inside, listed');
  await screenshots(page, 'admin-group-from-source');
  for (const [path, form] of [
    [`groups/${engineers}/members/add`, { email: 'admin@example.com' }],
    [`groups/${engineers}/members/remove`, { email: 'alice@example.org' }],
    [`groups/${staff}/groups/remove`, { group: engineers }],
    [`groups/${engineers}/delete`, { confirm: 'yes' }],
  ] as const) {
    const r = await page.request.post(`${admin}/${path}`, { form: { csrf, ...form }, headers: { origin: s.config.publicUrl }, maxRedirects: 0 });
    t.equal(r.status(), 403, `${path}: refused by the core`);
    t.match(await r.text(), /role="alert">This group comes from the directory source corp: its [a-z ]+ are changed there</);
  }
  t.same(
    ((await cli(s.dataDir, ['--json', 'group', 'show', 'staff'])).json.groups as Array<{ name: string }>).map((g) => g.name),
    ['engineers'],
    'nothing changed',
  );

  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    for (const where of ['sources', `accounts/${alice}`, `groups/${staff}`, `groups/${engineers}`]) {
      await page.goto(`${admin}/${where}`);
      t.same(await outsideItsBox(page), [], `/admin/${where} at ${width} px: everything inside its box`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // The directory is down: said on the page, and in the table; nobody disabled.
  await slapd.stop();
  await page.goto(`${admin}/sources`);
  const [failed] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    row.getByRole('button', { name: 'Sync now: corp' }).click(),
  ]);
  t.equal(failed.status(), 503);
  t.match(await text(page, '[role="alert"]'), /^The directory of the source corp cannot be used now \(.+\)$/);
  const down = await cells();
  t.match(down[5], new RegExp(`^failed ${WHEN} The directory of the source corp cannot be used now \\(.+\\)$`), 'the table says it failed, and why');
  t.same(down.slice(1, 4), ['3', '0', '2'], 'nothing changed');
  t.equal(Number((await s.db('user_account').where({ disabled: true }).count({ n: '*' }).first())!.n), 0, 'nobody disabled');
  await screenshots(page, 'admin-sources-failed');
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    t.same(await outsideItsBox(page), [], `a failed sync at ${width} px: everything inside its box`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });

  // Back, without Carol: she is disabled, her page says why.
  await slapd.start();
  await slapd.modify(`dn: ${groupDn('staff')}\nchangetype: modify\ndelete: member\nmember: ${personDn('carol')}\n`);
  await slapd.remove(personDn('carol'));
  await page.goto(`${admin}/sources`);
  await row.getByRole('button', { name: 'Sync now: corp' }).click();
  await page.locator('#sync-report, [role="alert"]').first().waitFor();
  t.equal(await page.locator('[role="alert"]').count(), 0, await text(page, 'main'));
  t.match(await text(page, '#report-people'), /0 created, 0 updated, 2 unchanged, 1 disabled/);
  t.same((await cells()).slice(1, 4), ['2', '1', '2'], 'one gone');
  const carol = (await s.db('user_account').where({ email_key: 'carol@example.org' }).first()).reference_id as string;
  await page.goto(`${admin}/accounts/${carol}`);
  t.match(
    await text(page, '#account-source'),
    /^From the directory source corp: change it there\. The directory no longer has this person, so the account is disabled here\.$/,
  );
  await screenshots(page, 'admin-account-gone-from-source');
});

t.test("a source's groups: refused to the shell and the record API, renamed and removed by the sync", async (t) => {
  const slapd = await directory(t);
  const s = await withAdmin(t);
  t.equal((await addSource(s, slapd)).code, 0);
  t.equal((await cli(s.dataDir, ['source', 'sync', 'corp'])).code, 0);
  t.equal((await cli(s.dataDir, ['group', 'create', 'local'])).code, 0);
  for (const args of [
    ['group', 'add', 'engineers', 'admin@example.com'],
    ['group', 'remove', 'engineers', 'alice@example.org'],
    ['group', 'add-group', 'staff', 'local'],
    ['group', 'remove-group', 'staff', 'engineers'],
    ['group', 'delete', 'engineers'],
  ]) {
    const r = await cli(s.dataDir, args);
    t.not(r.code, 0, `${args.join(' ')}: refused`);
    t.match(r.err, /comes from the directory source corp/);
  }
  const put = await cli(s.dataDir, ['group', 'add-group', 'local', 'engineers']);
  t.equal(put.code, 0, "a source's group may go inside a group made here (that is the outer group's change)");
  const engineers = (await s.db('usergroup').where({ name: 'engineers' }).first()).reference_id as string;
  const patch = await s.call('PATCH', `/api/usergroup/${engineers}`, {
    token: s.adminToken,
    body: { data: { type: 'usergroup', id: engineers, attributes: { name: 'renamed' } }, meta: {} },
  });
  t.equal(patch.status, 403, patch.text);
  t.equal((await s.call('DELETE', `/api/usergroup/${engineers}`, { token: s.adminToken })).status, 403);

  // The sync, from the shell: a group renamed there is renamed here, one gone is removed.
  await slapd.modify(`dn: ${groupDn('engineers')}\nchangetype: modrdn\nnewrdn: cn=developers\ndeleteoldrdn: 1\n`);
  await slapd.modify(
    `dn: ${groupDn('staff')}\nchangetype: modify\ndelete: member\nmember: ${groupDn('engineers')}\n-\nadd: member\nmember: ${groupDn('developers')}\n`,
  );
  const r = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(r.code, 0, r.err);
  t.match(r.json.groups, { renamed: 1, skipped: 0 });
  t.same(
    r.json.skipped.filter((x: { dn: string }) => !/uid=(dave|erin)/.test(x.dn)),
    [],
    'nothing else left out',
  );
  t.equal((await s.db('usergroup').where({ reference_id: engineers }).first()).name, 'developers');
  await slapd.remove(groupDn('staff'));
  const gone = await cli(s.dataDir, ['--json', 'source', 'sync', 'corp']);
  t.equal(gone.code, 0, gone.err);
  t.match(gone.json.groups, { removed: 1 });
  t.notOk(await s.db('usergroup').where({ name: 'staff' }).first(), 'a group gone from the directory is removed');
});
