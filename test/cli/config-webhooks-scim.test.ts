// Webhooks and SCIM push targets in a configuration file: a webhook named by its URL with its
// signing secret from a reference, a target named by its name with its token from one. Plan,
// apply, apply again (nothing), a changed secret or token said without its value, export
// (references, never values) and a round trip into an empty store; hand-made ones taken over and,
// once the file drops them, let go (never deleted); managed ones read-only to the shell; a
// webhook from the file delivering events signed with its reference's secret, and a target from
// the file synced once applied; bad entries and references refused at their line and column.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, tempDir, withAdmin } from '../helpers/server';
import { startReceiver } from '../helpers/receiver';
import { startScimTarget } from '../helpers/scim-target';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;

const HOOK_SECRET = whsec();
const NEW_HOOK_SECRET = whsec();
const CHAT_SECRET = whsec();
const WIKI_TOKEN = `wiki-token-${randomBytes(16).toString('hex')}`;
const NEW_WIKI_TOKEN = `wiki-token-2-${randomBytes(16).toString('hex')}`;
const LOOPBACK = ['--webhook-allow-private', 'loopback'];

const FILE = `version: 1
groups:
  - name: staff
webhooks:
  - url: https://hooks.example.invalid/gatehouse?key=k3y-in-query
    events: [account.created, account.deleted]
    description: Audit trail
    secret: {file: hook-secret}
  - url: https://chat.example.invalid/in
    secret: {env: CHAT_SECRET}
scim_targets:
  - name: wiki
    url: https://wiki.example.invalid/scim/v2
    token: {env: WIKI_TOKEN}
    groups: [staff]
`;
const HOOK = 'https://hooks.example.invalid/gatehouse?key=…';

t.test('plan, apply, apply again, export: webhooks and SCIM targets, secrets by reference, never by value', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const env = { CHAT_SECRET, WIKI_TOKEN };
  const said: string[] = [];
  const run = async (args: string[], e: NodeJS.ProcessEnv = env, stdin?: string) => {
    const r = await cli(s.dataDir, args, { env: e, stdin });
    said.push(r.out, r.err);
    return r;
  };
  const oldHook = (await run(['--json', 'webhook', 'add', '--url', 'https://old.example.invalid/hook'])).json;
  const CRM_TOKEN = `crm-token-${randomBytes(16).toString('hex')}`;
  const crm = await run(['--json', 'scim', 'target', 'add', '--url', 'https://crm.example.invalid/scim/v2', '--token-stdin', '--name', 'crm'], env, CRM_TOKEN);
  t.equal(crm.code, 0, crm.err);
  write(dir, 'hook-secret', `${HOOK_SECRET}\n`);
  const file = write(dir, 'gatehouse.yaml', FILE);

  const plan = await run(['config', 'plan', file]);
  t.equal(plan.code, 2, plan.err);
  t.match(plan.out, new RegExp(`^\\+ webhook ${escaped(HOOK)}$`, 'm'), 'the query value hidden');
  t.match(plan.out, /^\+ webhook https:\/\/chat\.example\.invalid\/in$/m);
  t.match(plan.out, /^\+ scim_target wiki$/m);
  t.match(
    plan.out,
    new RegExp(`^ {2}webhook https://old\\.example\\.invalid/hook \\(${oldHook.webhook.id}\\): made by hand, not in the file \\(left alone\\)$`, 'm'),
  );
  t.match(plan.out, /^ {2}scim_target crm \(https:\/\/crm\.example\.invalid\/scim\/v2\): made by hand, not in the file \(left alone\)$/m);
  t.notMatch(plan.out, /k3y-in-query/, 'a key in a query string is not printed');
  t.equal((await run(['--json', 'webhook', 'list'])).json.webhooks.length, 1, 'a plan changes nothing');

  const applied = await run(['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.equal(applied.out, plan.out, 'apply did what plan said');
  const again = await run(['config', 'plan', file]);
  t.equal(again.code, 0, `applied: nothing to change\n${again.out}`);
  t.same((await run(['--json', 'config', 'apply', file])).json.changes, [], 'a second apply changes nothing');

  const hooks = (await run(['--json', 'webhook', 'list'])).json.webhooks as Array<{ id: string; url: string; events: string[]; description: string }>;
  const hook = hooks.find((w) => w.url === HOOK)!;
  t.same(hook.events, ['account.created', 'account.deleted']);
  t.equal(hook.description, 'Audit trail');
  const chat = hooks.find((w) => w.url === 'https://chat.example.invalid/in')!;
  t.same(chat.events, [], 'no events listed: every event');
  const secrets = await s.db('webhook').select('url', 'secret');
  t.equal(secrets.find((r) => r.url.startsWith('https://hooks.'))!.secret, HOOK_SECRET, "the signing secret is the reference's");
  const wiki = (await run(['--json', 'scim', 'target', 'show', 'wiki'])).json;
  t.same(wiki.groups, ['staff']);
  t.equal((await s.db('scim_target').where({ name: 'wiki' }).first()).token, WIKI_TOKEN);
  t.ok(await s.db('audit_event').where({ event: 'webhook_added' }).first(), 'audited as webhook add is');
  t.ok(await s.db('audit_event').where({ event: 'scim_target_added' }).first(), 'audited as scim target add is');

  // Changed secret, token and events: the plan says what changed, never the values.
  write(dir, 'hook-secret', NEW_HOOK_SECRET);
  const changed = write(dir, 'gatehouse.yaml', FILE.replace('[account.created, account.deleted]', '[account.created]'));
  const replan = await run(['config', 'plan', changed], { ...env, WIKI_TOKEN: NEW_WIKI_TOKEN });
  t.equal(replan.code, 2, replan.err);
  t.same(replan.out.trim().split('\n'), [
    `~ webhook ${HOOK}: events: account.created (was account.created, account.deleted); secret changed`,
    '~ scim_target wiki: token changed',
    `  webhook https://old.example.invalid/hook (${oldHook.webhook.id}): made by hand, not in the file (left alone)`,
    '  scim_target crm (https://crm.example.invalid/scim/v2): made by hand, not in the file (left alone)',
  ]);
  t.equal((await run(['config', 'apply', changed], { ...env, WIKI_TOKEN: NEW_WIKI_TOKEN })).code, 0);
  t.equal((await run(['config', 'plan', changed], { ...env, WIKI_TOKEN: NEW_WIKI_TOKEN })).code, 0, 'the new secret and token are the stored ones now');
  t.ok(await s.db('audit_event').where({ event: 'webhook_secret_rotated' }).first(), 'a changed secret is audited as a rotation');
  t.ok(await s.db('audit_event').where({ event: 'scim_target_synced' }).first(), 'a changed target is synced');

  // The file's objects are the file's: the shell refuses and names it.
  for (const [args, what] of [
    [['webhook', 'remove', hook.id], `webhook ${hook.id}`],
    [['webhook', 'rotate-secret', chat.id], `webhook ${chat.id}`],
    [['webhook', 'add', '--url', 'https://chat.example.invalid/in'], `webhook ${chat.id}`],
    [['scim', 'target', 'remove', 'wiki'], 'scim_target wiki'],
  ] as Array<[string[], string]>) {
    const r = await run(args);
    t.equal(r.code, 3, args.join(' '));
    t.match(r.err, new RegExp(`the ${what} is managed by the configuration file ${escaped(file)}: change it there`));
  }
  t.equal((await run(['scim', 'target', 'sync', 'wiki'])).code, 0, 'a sync changes nothing the file says');

  // Export: the references the file gave, as it gave them; hand-made objects with variables the export names, saying so.
  const exported = await run(['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  const named = (v: string) => `\\{ env: ${v} \\} # set ${v} to it where this file is applied \\(unset: the store keeps the one it has\\)`;
  t.match(exported.out, /webhooks:\n {2}- url: https:\/\/chat\.example\.invalid\/in\n {4}secret: \{ env: CHAT_SECRET \}\n/);
  t.match(
    exported.out,
    /- url: https:\/\/hooks\.example\.invalid\/gatehouse\?key=k3y-in-query\n {4}events:\n {6}- account\.created\n {4}description: Audit trail\n {4}secret: \{ file: hook-secret \}\n/,
  );
  t.match(
    exported.out,
    new RegExp(`- url: https://old\\.example\\.invalid/hook\\n {4}secret: ${named('GATEHOUSE_WEBHOOK_SECRET_OLD_EXAMPLE_INVALID_HOOK')}\\n`),
  );
  t.match(
    exported.out,
    new RegExp(`scim_targets:\\n {2}- name: crm\\n {4}url: https://crm\\.example\\.invalid/scim/v2\\n {4}token: ${named('GATEHOUSE_SCIM_TOKEN_CRM')}\\n`),
  );
  t.match(exported.out, /- name: wiki\n {4}url: https:\/\/wiki\.example\.invalid\/scim\/v2\n {4}token: \{ env: WIKI_TOKEN \}\n {4}groups:\n {6}- staff\n/);

  // Round trip: apply into an empty store (the secrets from the same references), export again.
  const other = await withAdmin(t);
  const copy = write(dir, 'exported.yaml', exported.out);
  const copyEnv = {
    CHAT_SECRET,
    GATEHOUSE_WEBHOOK_SECRET_OLD_EXAMPLE_INVALID_HOOK: oldHook.secret,
    GATEHOUSE_SCIM_TOKEN_CRM: CRM_TOKEN,
    WIKI_TOKEN: NEW_WIKI_TOKEN,
  };
  const intoOther = await cli(other.dataDir, ['config', 'apply', copy], { env: copyEnv });
  t.equal(intoOther.code, 0, intoOther.err);
  t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');

  // Written over the file and applied back to the store it came from: nothing changes; its hand-made objects are taken over, their secrets stay.
  write(dir, 'gatehouse.yaml', exported.out);
  const back = await run(['config', 'plan', file], copyEnv);
  t.equal(back.code, 0, back.err);
  t.same(
    back.out.split('\n').filter((l) => / (webhook|scim_target) /.test(l)),
    [`  webhook https://old.example.invalid/hook: taken over: managed by ${file} from now on`, `  scim_target crm: taken over: managed by ${file} from now on`],
  );
  t.equal((await run(['config', 'apply', file], copyEnv)).code, 0);
  t.equal((await run(['webhook', 'remove', oldHook.webhook.id])).code, 3, 'taken over: the shell leaves it to the file');

  // Dropped by the file: what an apply made is removed, what it took over is let go and kept.
  t.match(exported.out, /\nscim_targets:/);
  write(dir, 'gatehouse.yaml', exported.out.replace(/\nwebhooks:[\s\S]*$/, '\n'));
  const plannedSmaller = await run(['config', 'plan', file], copyEnv);
  const shrunk = await run(['config', 'apply', file], copyEnv);
  t.equal(shrunk.code, 0, shrunk.err);
  t.equal(shrunk.out, plannedSmaller.out);
  t.match(shrunk.out, /^- webhook https:\/\/old\.example\.invalid\/hook: no longer managed \(made by hand: kept\)$/m);
  t.match(shrunk.out, /^- scim_target crm: no longer managed \(made by hand: kept\)$/m);
  t.match(shrunk.out, /^- webhook https:\/\/chat\.example\.invalid\/in$/m);
  t.match(shrunk.out, new RegExp(`^- webhook ${escaped(HOOK)}$`, 'm'));
  t.match(shrunk.out, /^- scim_target wiki$/m);
  t.same(
    (await run(['--json', 'webhook', 'list'])).json.webhooks.map((w: { id: string }) => w.id),
    [oldHook.webhook.id],
    'only the hand-made webhook is left',
  );
  t.same(
    (await run(['--json', 'scim', 'target', 'list'])).json.targets.map((x: { name: string }) => x.name),
    ['crm'],
  );
  t.equal((await run(['webhook', 'remove', oldHook.webhook.id])).code, 0, "let go: the shell's again");
  t.equal((await run(['scim', 'target', 'remove', 'crm'])).code, 0);
  t.ok(await s.db('audit_event').where({ event: 'scim_target_removed' }).first());

  const everything = said.join('\n') + JSON.stringify(await s.db('audit_event').select());
  for (const secret of [HOOK_SECRET, NEW_HOOK_SECRET, CHAT_SECRET, WIKI_TOKEN, NEW_WIKI_TOKEN, CRM_TOKEN])
    t.notOk(everything.includes(secret), 'no secret is ever printed or audited');
});

t.test("a webhook from the file delivers signed with its reference's secret; a SCIM target from the file is synced", async (t) => {
  const s = await withAdmin(t, { webhookAllowPrivate: ['loopback'] });
  const dir = tempDir(t);
  const receiver = await startReceiver(t);
  const target = await startScimTarget(t);
  await cli(s.dataDir, ['group', 'create', 'staff']);
  await cli(s.dataDir, ['user', 'create', '--email', 'ada@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  await cli(s.dataDir, ['group', 'add', 'staff', 'ada@example.com']);
  const file = write(
    dir,
    'gatehouse.yaml',
    `version: 1
webhooks:
  - url: ${receiver.url}
    events: [account.created]
    secret: {env: HOOK_SECRET}
scim_targets:
  - name: app
    url: ${target.url}
    token: {file: app-token}
    groups: [staff]
`,
  );
  write(dir, 'app-token', `${target.token}\n`);
  const secret = whsec();
  receiver.secret = secret;

  // A literal address inside the network is refused at its line without the setting (no DNS is asked).
  const refused = await cli(s.dataDir, ['config', 'plan', file], { env: { HOOK_SECRET: secret } });
  t.equal(refused.code, 1);
  t.match(refused.err, /gatehouse\.yaml:3:10: 127\.0\.0\.1 is a loopback address: .*webhook-allow-private loopback/);

  const applied = await cli(s.dataDir, [...LOOPBACK, 'config', 'apply', file], { env: { HOOK_SECRET: secret } });
  t.equal(applied.code, 0, applied.err);
  await s.core.settle();
  t.same(
    [...target.store.users.values()].map((u) => u.userName),
    ['ada'],
    'the group member pushed once the apply committed',
  );
  t.same(
    [...target.store.groups.values()].map((g) => g.displayName),
    ['staff'],
  );

  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'bo@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  await s.core.settle();
  const got = await receiver.next(1);
  t.ok(got.verified, "signed with the reference's secret");
  t.equal(got.verified?.type, 'account.created');

  // The reference holds another secret: applied, the next delivery is signed with it.
  const next = whsec();
  const rotated = await cli(s.dataDir, [...LOOPBACK, 'config', 'apply', file], { env: { HOOK_SECRET: next } });
  t.equal(rotated.code, 0, rotated.err);
  t.equal(rotated.out.split('\n')[0], `~ webhook ${receiver.url}: secret changed`);
  t.notMatch(rotated.out + rotated.err, new RegExp(escaped(next)));
  receiver.secret = next;
  t.equal((await cli(s.dataDir, ['user', 'create', '--email', 'cy@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } })).code, 0);
  await s.core.settle();
  const after = await receiver.next(2);
  t.equal(after.verified?.type, 'account.created', 'signed with the new secret');
});

t.test('bad entries and references: exit 1 at the line and column, nothing made', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const outside = tempDir(t);
  write(outside, 'secret', HOOK_SECRET);
  write(dir, 'short', 'whsec_c2hvcnQ=');
  const hook = (lines: string, url = 'https://h.example.invalid/x') => `version: 1\nwebhooks:\n  - url: ${url}\n${lines}`;
  const target = (lines: string, name = 'app', url = 'https://app.example.invalid/scim/v2') =>
    `version: 1\nscim_targets:\n  - name: ${name}\n    url: ${url}\n${lines}`;
  const ok = '    secret: {env: HOOK_SECRET}\n';
  const token = '    token: {env: WIKI_TOKEN}\n';
  const cases: Array<[string, string, RegExp]> = [
    ['missing env', hook('    secret: {env: NOT_SET_HERE}\n'), /missing env\.yaml:4:13: the environment variable NOT_SET_HERE is not set/],
    ['climb', hook('    secret: {file: ../../../../../../etc/passwd}\n'), /climb\.yaml:4:13: the secret file \.\.\/(\.\.\/)+etc\/passwd is outside/],
    ['absolute', hook(`    secret: {file: ${path.join(outside, 'secret')}}\n`), /absolute\.yaml:4:13: the secret file \/.* is outside/],
    ['short', hook('    secret: {file: short}\n'), /short\.yaml:4:13: a webhook secret is whsec_ and the base64 of at least 24 random bytes/],
    ['not base64', hook('    secret: {env: PLAIN}\n'), /not base64\.yaml:4:13: a webhook secret is whsec_/],
    ['no secret', hook(''), /no secret\.yaml:3:5: webhooks\[0\] must have required property 'secret'/],
    ['ftp', hook(ok, 'ftp://h.example.invalid/x'), /ftp\.yaml:3:10: url must be http or https, not ftp/],
    ['user', hook(ok, 'https://u:p@h.example.invalid/x'), /user\.yaml:3:10: url must carry no user or password/],
    ['private', hook(ok, 'http://10.1.2.3/x'), /private\.yaml:3:10: 10\.1\.2\.3 is a private address/],
    ['event', hook(`${ok}    events: [account.exploded]\n`), /event\.yaml:5:14: webhooks\[0\]\.events\[0\] must be equal to one of the allowed values/],
    ['no events', hook(`${ok}    events: []\n`), /no events\.yaml:5:13: webhooks\[0\]\.events must NOT have fewer than 1 items/],
    ['twice', `${hook(ok)}  - url: https://h.example.invalid/x\n${ok}`, /twice\.yaml:5:10: the webhook https:\/\/h\.example\.invalid\/x is named twice/],
    ['token env', target('    token: {env: NOT_SET_HERE}\n'), /token env\.yaml:5:12: the environment variable NOT_SET_HERE is not set/],
    ['control', target('    token: {env: CONTROL}\n'), /control\.yaml:5:12: the token is 1 to 4,096 characters, no control characters/],
    ['no token', target(''), /no token\.yaml:3:5: scim_targets\[0\] must have required property 'token'/],
    ['plain http', target(token, 'app', 'http://app.example.invalid/scim/v2'), /plain http\.yaml:4:10: url must be https/],
    ['bad name', target(token, '-app'), /bad name\.yaml:3:11: name must be 1 to 64 letters/],
    ['group', target(`${token}    groups: [nobody]\n`), /group\.yaml:6:14: no group named nobody/],
    [
      'target twice',
      `${target(token)}  - name: APP\n    url: https://b.example.invalid/scim/v2\n${token}`,
      /target twice\.yaml:6:11: the SCIM target APP is named twice/,
    ],
  ];
  const env = { HOOK_SECRET, WIKI_TOKEN, PLAIN: 'not-base64-but-long-enough-0123456789abcdefghijklmnop', CONTROL: 'app\u0001token' };
  for (const [name, text, expected] of cases) {
    const file = write(dir, `${name}.yaml`, text);
    const plan = await cli(s.dataDir, ['config', 'plan', file], { env });
    t.equal(plan.code, 1, `${name}: exit 1 (${plan.out}${plan.err})`);
    t.match(plan.err, expected, `${name}: ${plan.err.trim()}`);
    t.equal(plan.err.split(file).length, 2, `${name}: located once`);
    t.notOk(plan.err.includes(HOOK_SECRET) || plan.err.includes(WIKI_TOKEN) || plan.err.includes('root:'), `${name}: no secret in the message`);
    t.not((await cli(s.dataDir, ['config', 'apply', file], { env })).code, 0, `${name}: apply refuses it too`);
  }
  t.same((await cli(s.dataDir, ['--json', 'webhook', 'list'])).json.webhooks, [], 'nothing was made');
  t.same((await cli(s.dataDir, ['--json', 'scim', 'target', 'list'])).json.targets, []);

  // Two webhooks made by hand with the file's URL: which one the file means is not guessed.
  const a = (await cli(s.dataDir, ['--json', 'webhook', 'add', '--url', 'https://h.example.invalid/x'])).json.webhook.id;
  const b = (await cli(s.dataDir, ['--json', 'webhook', 'add', '--url', 'https://h.example.invalid/x'])).json.webhook.id;
  const clash = await cli(s.dataDir, ['config', 'plan', write(dir, 'clash.yaml', hook(ok))], { env });
  t.equal(clash.code, 1);
  t.match(clash.err, new RegExp(`clash\\.yaml:3:10: 2 webhooks have the URL https://h\\.example\\.invalid/x \\(${a}, ${b}\\): remove all but one`));

  // A target made by hand whose name differs from the file's only in case: refused, not merged.
  const added = await cli(s.dataDir, ['scim', 'target', 'add', '--url', 'https://app.example.invalid/scim/v2', '--token-stdin', '--name', 'App'], {
    stdin: WIKI_TOKEN,
  });
  t.equal(added.code, 0, added.err);
  const caseClash = await cli(s.dataDir, ['config', 'plan', write(dir, 'case.yaml', target(token))], { env });
  t.equal(caseClash.code, 1);
  t.match(caseClash.err, /case\.yaml:3:11: a SCIM target App exists \(names differing only in case are refused\)/);
});
