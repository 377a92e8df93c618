// `config export`, then `config plan` of what it wrote, on the store it came from: nothing to
// change, for a store made by hand (every kind, secrets the export has no reference for) and for
// one made by a file (secrets from files and variables). A reference a file applied is written
// back as it was; a secret made by hand is a variable the export names and says so, and where
// that variable is not set the plan keeps the stored secret and says so, instead of failing.
// Actions are written {guest: true|false}, as the documentation writes them.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin } from '../helpers/server';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};
const secret = () => randomBytes(32).toString('base64');
const whsec = () => `whsec_${randomBytes(32).toString('base64')}`;
/** The plan's lines that change something (+, ~, -). */
const changes = (out: string) => out.split('\n').filter((l) => /^[+~-] /.test(l));

t.test('a store made by hand: its export plans as nothing to change, and applies as nothing', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const run = (args: string[], env: NodeJS.ProcessEnv = {}, stdin?: string) => cli(s.dataDir, args, { env, stdin });
  for (const args of [
    ['group', 'create', 'staff'],
    ['group', 'create', 'engineering'],
    ['group', 'add-group', 'staff', 'engineering'],
    ['action', 'set-permission', 'signup', '--guest', 'on'],
    ['app', 'add', '--host', 'photos.example.com', '--allow-group', 'staff'],
    ['saml', 'sp', 'add', '--entity-id', 'https://wiki.example.com/saml', '--acs-url', 'https://wiki.example.com/saml/acs'],
    ['webhook', 'add', '--url', 'https://audit.example.com/in'],
  ]) {
    const r = await run(args);
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
  }
  const grafana = (await run(['--json', 'client', 'add', '--name', 'Grafana', '--redirect-uri', 'https://grafana.example.com/cb', '--allowed-group', 'staff']))
    .json as { client_id: string; client_secret: string };
  t.equal((await run(['client', 'add', '--name', 'SPA', '--public', '--redirect-uri', 'http://localhost:5173/cb'])).code, 0);
  const gitlabSecret = secret();
  t.equal(
    (
      await run(['provider', 'add', '--name', 'gitlab', '--issuer', 'https://gitlab.example.com', '--client-id', 'gh', '--client-secret-env', 'S'], {
        S: gitlabSecret,
      })
    ).code,
    0,
  );
  const scimToken = `crm-${randomBytes(16).toString('hex')}`;
  t.equal((await run(['scim', 'target', 'add', '--name', 'crm', '--url', 'https://crm.example.com/scim/v2', '--token-stdin'], {}, scimToken)).code, 0);

  const exported = await run(['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  // The documentation's form, and only what differs from a new store.
  t.match(exported.out, /\nactions:\n {2}signup: \{ guest: true \}\n[a-z]/, 'actions: {guest: …}, only signup changed');
  t.notMatch(exported.out, /permission: \d/, 'no raw integer');
  // A secret made by hand has no reference: a variable the export names, saying so.
  const clientVar = `GATEHOUSE_CLIENT_SECRET_${grafana.client_id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  for (const name of [clientVar, 'GATEHOUSE_PROVIDER_SECRET_GITLAB', 'GATEHOUSE_WEBHOOK_SECRET_AUDIT_EXAMPLE_COM_IN', 'GATEHOUSE_SCIM_TOKEN_CRM']) {
    t.match(
      exported.out,
      new RegExp(`\\{ env: ${name} \\} # set ${name} to it where this file is applied \\(unset: the store keeps the one it has\\)\n`),
      name,
    );
  }
  const file = write(dir, 'gatehouse.yaml', exported.out);

  const plan = await run(['config', 'plan', file]);
  t.equal(plan.code, 0, `nothing to change: ${plan.out}${plan.err}`);
  t.equal(plan.out.split('\n')[0], 'nothing to change');
  t.same(changes(plan.out), []);
  t.match(plan.out, new RegExp(`^ {2}oidc_client ${grafana.client_id}: taken over: managed by .*gatehouse\\.yaml from now on$`, 'm'));
  t.match(
    plan.out,
    new RegExp(`^ {2}oidc_client ${grafana.client_id}: secret: the environment variable ${clientVar} is not set: the stored one is kept$`, 'm'),
  );
  t.match(plan.out, /^ {2}provider gitlab: client_secret: the environment variable GATEHOUSE_PROVIDER_SECRET_GITLAB is not set: the stored one is kept$/m);
  t.match(plan.out, /^ {2}scim_target crm: token: the environment variable GATEHOUSE_SCIM_TOKEN_CRM is not set: the stored one is kept$/m);

  // Applied as it is: the file takes everything over, changes nothing, keeps every secret.
  const applied = await run(['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.equal(applied.out, plan.out, 'apply did what plan said');
  const again = await run(['config', 'plan', file], {
    [clientVar]: grafana.client_secret,
    GATEHOUSE_PROVIDER_SECRET_GITLAB: gitlabSecret,
    GATEHOUSE_SCIM_TOKEN_CRM: scimToken,
  });
  t.equal(again.code, 0, again.out);
  t.notMatch(again.out, /changed/, 'the secrets, given now, are the ones the store kept');
  t.equal((await run(['config', 'export'])).out, exported.out, 'and the export is the same');

  // The variable names a new secret only where it is set: a wrong one is said (never shown).
  const rotated = await run(['config', 'plan', file], { [clientVar]: secret() });
  t.equal(rotated.code, 2);
  t.equal(changes(rotated.out).join('\n'), `~ oidc_client ${grafana.client_id}: secret changed`);
});

t.test('a store made by a file: its export writes the references back and plans as nothing to change', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const jobSecret = secret();
  const env = { JOB_SECRET: jobSecret, WIKI_TOKEN: `wiki-${randomBytes(16).toString('hex')}` };
  const run = (args: string[], e: NodeJS.ProcessEnv = env) => cli(s.dataDir, args, { env: e });
  write(dir, 'grafana-client-secret', `${secret()}\n`);
  write(dir, 'audit-webhook-secret', `${whsec()}\n`);
  write(dir, 'gitlab-secret', `${secret()}\n`);
  const original = `version: 1
groups:
  - name: staff
    groups: [engineering]
  - name: engineering
actions:
  signup: {guest: false}
oidc_clients:
  - client_id: grafana
    name: Grafana
    secret: {file: grafana-client-secret}
    redirect_uris: [https://grafana.example.com/cb]
    allowed_groups: [staff]
  - client_id: job
    name: Job
    secret: {env: JOB_SECRET}
    credentials: true
providers:
  - name: gitlab
    issuer: https://gitlab.example.com
    client_id: gatehouse
    client_secret: {file: gitlab-secret}
webhooks:
  - url: https://audit.example.com/in
    secret: {file: audit-webhook-secret}
scim_targets:
  - name: wiki
    url: https://wiki.example.com/scim/v2
    token: {env: WIKI_TOKEN}
`;
  const file = write(dir, 'gatehouse.yaml', original);
  const applied = await run(['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);

  const exported = await run(['config', 'export', '--out', path.join(dir, 'exported.yaml')]);
  t.equal(exported.code, 0, exported.err);
  const text = fs.readFileSync(path.join(dir, 'exported.yaml'), 'utf8');
  t.match(text, /\nactions:\n {2}signup: \{ guest: false \}\n/, 'the action as the file wrote it');
  t.match(text, /- client_id: grafana\n {4}name: Grafana\n {4}secret: \{ file: grafana-client-secret \}\n/, 'a file reference stays a file reference');
  t.match(text, /- client_id: job\n {4}name: Job\n {4}secret: \{ env: JOB_SECRET \}\n/, 'a variable stays the same variable');
  t.match(text, /client_secret: \{ file: gitlab-secret \}\n/);
  t.match(text, /secret: \{ file: audit-webhook-secret \}\n/);
  t.match(text, /token: \{ env: WIKI_TOKEN \}\n/);
  t.notMatch(text, /GATEHOUSE_/, 'no variable invented');

  // Written over the file it came from: nothing to change, and nothing else to say.
  write(dir, 'gatehouse.yaml', text);
  const plan = await run(['config', 'plan', file]);
  t.equal(plan.code, 0, plan.err);
  t.equal(plan.out, 'nothing to change\n');
  // As another file: nothing changes either; the new file takes each object over.
  const other = await run(['config', 'plan', path.join(dir, 'exported.yaml')]);
  t.equal(other.code, 0, other.err);
  t.same(changes(other.out), []);
  t.match(other.out, /^ {2}oidc_client grafana: taken over from .*gatehouse\.yaml: managed by .*exported\.yaml from now on$/m);

  // Planned where the variables are not set (another machine): the stored secrets stand, said so.
  const elsewhere = await run(['config', 'plan', file], {});
  t.equal(elsewhere.code, 0, elsewhere.err);
  t.equal(
    elsewhere.out,
    [
      'nothing to change',
      '  oidc_client job: secret: the environment variable JOB_SECRET is not set: the stored one is kept',
      '  scim_target wiki: token: the environment variable WIKI_TOKEN is not set: the stored one is kept',
      '',
    ].join('\n'),
  );
  // A file reference whose file is gone is the same: kept, said.
  fs.renameSync(path.join(dir, 'gitlab-secret'), path.join(dir, 'gitlab-secret.moved'));
  const moved = await run(['config', 'plan', file]);
  t.equal(moved.code, 0, moved.err);
  t.match(moved.out, /^ {2}provider gitlab: client_secret: the file gitlab-secret does not exist: the stored one is kept$/m);
  fs.renameSync(path.join(dir, 'gitlab-secret.moved'), path.join(dir, 'gitlab-secret'));

  // A reference the store has not seen must be read: a mistyped variable is refused, as before.
  write(dir, 'gatehouse.yaml', text.replace('{ env: JOB_SECRET }', '{ env: JOB_SECERT }'));
  const typo = await run(['config', 'plan', file]);
  t.equal(typo.code, 1);
  t.match(typo.err, /gatehouse\.yaml:\d+:\d+: the environment variable JOB_SECERT is not set/);

  // The same secret from another reference: the plan says where it is read from now, and export follows.
  write(dir, 'job-secret', jobSecret);
  write(dir, 'gatehouse.yaml', text.replace('{ env: JOB_SECRET }', '{ file: job-secret }'));
  const switched = await run(['config', 'apply', file]);
  t.equal(switched.code, 0, switched.err);
  t.equal(changes(switched.out).join('\n'), '~ oidc_client job: secret read from {file: job-secret} (was {env: JOB_SECRET})');
  t.match((await run(['config', 'export'])).out, /- client_id: job\n {4}name: Job\n {4}secret: \{ file: job-secret \}\n/);
  t.equal((await run(['config', 'plan', file])).out, 'nothing to change\n');

  // Into an empty store, the same file makes the same store: its export is the same document.
  const copy = await withAdmin(t);
  const intoCopy = await cli(copy.dataDir, ['config', 'apply', file], { env });
  t.equal(intoCopy.code, 0, intoCopy.err);
  t.equal((await cli(copy.dataDir, ['config', 'export'])).out, (await run(['config', 'export'])).out);
});
