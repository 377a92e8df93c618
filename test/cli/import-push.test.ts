// An imported person reaches the apps as one who signed up would (issue 62): pushed to every SCIM
// target whose scope holds them (served by scimmy, an independent SCIM 2.0 implementation), with
// the file's groups and their members; a target scoped to a group gets only that group's people.
// The import's audit, written a batch at a time, still makes one audit row, and one webhook
// message per endpoint, for each event: every new membership reaches a webhook receiver (which
// verifies each signature), as `group add` would send it. A dry run pushes nothing.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import bcrypt from 'bcrypt';
import { cli } from '../helpers/cli';
import { startReceiver } from '../helpers/receiver';
import { startScimTarget, type ScimTarget } from '../helpers/scim-target';
import { PASSWORD, tempDir, withAdmin } from '../helpers/server';

type Json = Record<string, any>;
const LOOPBACK = ['--webhook-allow-private', 'loopback'];
const users = (target: ScimTarget) => [...target.store.users.values()];
const groupNamed = (target: ScimTarget, name: string) => [...target.store.groups.values()].find((g) => g.displayName === name);

t.test('imported people are pushed to SCIM targets and their memberships reach webhooks', async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const ok = async (args: string[], stdin?: string) => {
    const r = await cli(s.dataDir, ['--json', ...args], { stdin });
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    return r.json;
  };
  await ok(['group', 'create', 'staff']);
  const everyone = await startScimTarget(t);
  const scoped = await startScimTarget(t);
  await ok([...LOOPBACK, 'scim', 'target', 'add', '--url', everyone.url, '--token-stdin', '--name', 'everyone'], `${everyone.token}\n`);
  await ok([...LOOPBACK, 'scim', 'target', 'add', '--url', scoped.url, '--token-stdin', '--name', 'staff-only', '--group', 'staff'], `${scoped.token}\n`);
  const receiver = await startReceiver(t);
  receiver.secret = (await ok([...LOOPBACK, 'webhook', 'add', '--url', receiver.url, '--event', 'group.member_added', '--event', 'account.created'])).secret;
  await s.core.settle();
  const adminRef = (await ok(['user', 'show', 'admin@example.com'])).reference_id;
  const pushedBefore = users(everyone).length;

  const hash = bcrypt.hashSync(PASSWORD, 4);
  const file = path.join(tempDir(t), 'people.csv');
  fs.writeFileSync(
    file,
    [
      'email,name,username,groups,password_hash',
      `ann@example.com,Ann Archer,ann,staff;ops,${hash}`,
      `bob@example.com,Bob,,ops,${hash}`,
      'cat@example.com,Cat,,,',
      'admin@example.com,Not Touched,,staff,',
    ].join('\n') + '\n',
  );
  t.match(await ok(['import', '--from', 'csv', file, '--dry-run']), { created: 3 });
  await s.core.settle();
  t.equal(users(everyone).length, pushedBefore, 'a dry run pushes nothing');

  const report = await ok(['import', '--from', 'csv', file]);
  t.match(report, { created: 3, skipped: 1 });
  await s.core.settle();
  const ref = (email: string) => report.people.find((p: Json) => p.email === email).account as string;
  const [ann, bob, cat] = ['ann@example.com', 'bob@example.com', 'cat@example.com'].map(ref);

  // The target for everyone: each person made, as a signup is pushed (externalId = the reference id).
  for (const [id, email, userName, name] of [
    [ann, 'ann@example.com', 'ann', 'Ann Archer'],
    [bob, 'bob@example.com', 'bob', 'Bob'],
    [cat, 'cat@example.com', 'cat', 'Cat'],
  ])
    t.match(
      users(everyone).filter((u) => u.externalId === id),
      [{ userName, displayName: name, emails: [{ value: email }], active: true }],
      `${email} is at the target, once`,
    );
  const idThere = (target: ScimTarget, id: string) => users(target).find((u) => u.externalId === id)!.id;
  t.same(
    groupNamed(everyone, 'ops')!
      .members.map((m: Json) => m.value)
      .sort(),
    [idThere(everyone, ann), idThere(everyone, bob)].sort(),
    'the file’s new group, with its members by the ids the app gave',
  );
  t.same(
    groupNamed(everyone, 'staff')!.members.map((m: Json) => m.value),
    [idThere(everyone, ann)],
  );

  // The target scoped to staff: only staff's people (the administrator was never the file's to add).
  t.same(
    users(scoped).map((u) => u.externalId),
    [ann],
    'only the people of its group',
  );
  t.same(
    groupNamed(scoped, 'staff')!.members.map((m: Json) => m.value),
    [idThere(scoped, ann)],
  );
  t.notOk(groupNamed(scoped, 'ops'), 'nor another group');
  t.notOk(
    users(everyone).some((u) => u.externalId === adminRef && u.displayName === 'Not Touched'),
    'an administrator is never changed',
  );

  // Webhooks: one group.member_added per membership the import made, as `group add` sends it.
  const hooks = await receiver.next(3);
  t.ok(hooks);
  await new Promise((r) => setTimeout(r, 200));
  const bodies = receiver.received.map((r) => r.verified);
  t.ok(
    bodies.every((b) => b !== null),
    'every delivery verifies',
  );
  const added = bodies
    .filter((b) => b!.type === 'group.member_added')
    .map((b) => [b!.data.account.email, b!.data.group.name, b!.data.via])
    .sort();
  t.same(added, [
    ['ann@example.com', 'ops', 'cli'],
    ['ann@example.com', 'staff', 'cli'],
    ['bob@example.com', 'ops', 'cli'],
  ]);
  t.match(
    bodies.find((b) => b!.data.account.email === 'bob@example.com')!.data,
    { account: { id: bob, email: 'bob@example.com', name: 'Bob' }, group: { name: 'ops' } },
    'the account as it is, by its reference id',
  );
  t.notOk(
    bodies.some((b) => b!.type === 'account.created'),
    'an import is not a signup for webhooks (account_imported has no webhook event)',
  );

  const audit = (await ok(['audit', '--limit', '50'])).events.filter((e: Json) => ['account_imported', 'group_member_added'].includes(e.event));
  t.same(
    audit.map((e: Json) => [e.event, e.account, e.details.group_name ?? null]),
    [
      ['account_imported', ann, null],
      ['account_imported', bob, null],
      ['account_imported', cat, null],
      ['group_member_added', ann, 'staff'],
      ['group_member_added', ann, 'ops'],
      ['group_member_added', bob, 'ops'],
    ],
    'one audit row per event, in the order one at a time gave them',
  );

  // The same file again: nothing changes, nothing more is pushed.
  const requests = everyone.requests.length;
  t.match(await ok(['import', '--from', 'csv', file]), { created: 0, updated: 0 });
  await s.core.settle();
  t.equal(everyone.requests.length, requests, 'again: no request to the target');
});
