// OIDC clients in a configuration file: a fixed client_id and the secret from a reference. Plan,
// apply, apply again (nothing), a changed secret said without its value, export (references, never
// values) and a round trip into an empty store; a client from the file at the token endpoint with
// the secret its reference holds (and the next one after it changes); references that reach out
// of the allowed folders or name a missing variable refused at their line and column; managed
// clients read-only to the shell.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin } from '../helpers/server';
import { providerWith } from '../helpers/oidc';

const write = (dir: string, name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const GRAFANA_SECRET = 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const BACKUP_SECRET = 'backup-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const NEW_GRAFANA_SECRET = 'grafana-secret-2-0123456789abcdefghijklmnopqrstuvwxyz';

const FILE = `version: 1
groups:
  - name: staff
oidc_clients:
  - client_id: grafana
    name: Grafana
    secret: {file: grafana-client-secret}
    redirect_uris: [https://grafana.example.com/login/generic_oauth]
    allowed_groups: [staff]
    first_party: true
    two_factor: false
  - client_id: backup-job
    name: Backup job
    secret: {env: BACKUP_SECRET}
    credentials: true
    audience: https://api.example.com
  - client_id: spa
    name: Single page app
    public: true
    redirect_uris: [http://localhost:5173/callback]
`;

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function clientCredentials(base: string, id: string, secret: string) {
  const r = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

t.test('plan, apply, apply again, export: clients with fixed ids, secrets by reference, never by value', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const env = { BACKUP_SECRET };
  const byHand = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.com/cb'])).json;
  write(dir, 'grafana-client-secret', `${GRAFANA_SECRET}\n`);
  const file = write(dir, 'gatehouse.yaml', FILE);
  const said: string[] = [];
  const run = async (args: string[], e: NodeJS.ProcessEnv = env) => {
    const r = await cli(s.dataDir, args, { env: e });
    said.push(r.out, r.err);
    return r;
  };

  const plan = await run(['config', 'plan', file]);
  t.equal(plan.code, 2, plan.err);
  t.match(plan.out, /^\+ oidc_client grafana$/m);
  t.match(plan.out, /^\+ oidc_client backup-job$/m);
  t.match(plan.out, /^\+ oidc_client spa$/m);
  t.match(plan.out, new RegExp(`^ {2}oidc_client ${byHand.client_id} \\(Wiki\\): made by hand, not in the file \\(left alone\\)$`, 'm'));
  t.equal((await run(['--json', 'client', 'list'])).json.clients.length, 1, 'a plan changes nothing');

  const applied = await run(['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.equal(applied.out, plan.out, 'apply did what plan said');
  const again = await run(['config', 'plan', file]);
  t.equal(again.code, 0, `applied: nothing to change\n${again.out}`);
  t.same((await run(['--json', 'config', 'apply', file])).json.changes, [], 'a second apply changes nothing');

  const grafana = (await run(['--json', 'client', 'show', 'grafana'])).json;
  t.same(grafana.redirect_uris, ['https://grafana.example.com/login/generic_oauth']);
  t.same(grafana.allowed_groups, ['staff'], "the file's own group, made in the same apply");
  t.equal(grafana.first_party, true);
  t.equal(grafana.two_factor, false);
  t.equal(grafana.public, false);
  const job = (await run(['--json', 'client', 'show', 'backup-job'])).json;
  t.same(job.grants, ['client_credentials']);
  t.equal(job.audience, 'https://api.example.com');
  t.equal((await run(['--json', 'client', 'show', 'spa'])).json.public, true);

  // A changed secret and address: the plan says what changed, never the secret.
  write(dir, 'grafana-client-secret', NEW_GRAFANA_SECRET);
  const changed = write(
    dir,
    'gatehouse.yaml',
    FILE.replace('https://grafana.example.com/login/generic_oauth', 'https://grafana.example.org/login/generic_oauth'),
  );
  const replan = await run(['config', 'plan', changed]);
  t.equal(replan.code, 2, replan.err);
  t.equal(
    replan.out.trim().split('\n')[0],
    '~ oidc_client grafana: redirect_uris: https://grafana.example.org/login/generic_oauth (was https://grafana.example.com/login/generic_oauth); secret changed',
  );
  t.equal((await run(['config', 'apply', changed])).code, 0);
  t.equal((await run(['config', 'plan', changed])).code, 0, 'the new secret is the stored one now');

  // The file's clients are the file's: the shell refuses and names it.
  for (const args of [
    ['client', 'remove', 'grafana'],
    ['client', 'set', 'grafana', '--two-factor', 'on'],
    ['client', 'rotate-secret', 'backup-job'],
  ]) {
    const r = await run(args);
    t.equal(r.code, 3, args.join(' '));
    t.match(r.err, new RegExp(`the oidc_client ${args[2]} is managed by the configuration file ${file.replace(/[.]/g, '\\.')}: change it there`));
  }
  t.equal((await run(['client', 'set', byHand.client_id, '--two-factor', 'on'])).code, 0, 'a client made by hand is still the shell’s');

  // Export: the references the file gave, as it gave them; public clients without one; a
  // hand-made client with a variable the export names for it, saying so.
  const exported = await run(['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  t.match(exported.out, /- client_id: grafana\n {4}name: Grafana\n {4}secret: \{ file: grafana-client-secret \}\n/);
  t.match(exported.out, /- client_id: backup-job\n {4}name: Backup job\n {4}secret: \{ env: BACKUP_SECRET \}\n/);
  t.match(exported.out, /- client_id: spa\n {4}name: Single page app\n {4}public: true\n/);
  t.match(exported.out, new RegExp(`- client_id: ${byHand.client_id}\\n`));
  const wikiSecretEnv = `GATEHOUSE_CLIENT_SECRET_${byHand.client_id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
  t.match(exported.out, new RegExp(`secret: \\{ env: ${wikiSecretEnv} \\} # set ${wikiSecretEnv} to it where this file is applied`));

  // Round trip: apply into an empty store (the secrets from the same references), export again.
  const other = await withAdmin(t);
  const copy = write(dir, 'exported.yaml', exported.out);
  const copyEnv = { BACKUP_SECRET, [wikiSecretEnv]: byHand.client_secret };
  const intoOther = await cli(other.dataDir, ['config', 'apply', copy], { env: copyEnv });
  t.equal(intoOther.code, 0, intoOther.err);
  t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');
  // Applied back to the store it came from, it changes nothing: every client is taken over, its secret stays.
  const back = await run(['config', 'plan', copy], copyEnv);
  t.equal(back.code, 0, back.out);
  t.match(back.out, /^nothing to change\n/);
  const clientLines = back.out.split('\n').filter((l) => l.includes('oidc_client'));
  t.ok(clientLines.includes(`  oidc_client ${byHand.client_id}: taken over: managed by ${copy} from now on`), 'the hand-made one');
  t.same(
    clientLines.filter((l) => !l.includes(byHand.client_id)),
    ['backup-job', 'grafana', 'spa'].map((id) => `  oidc_client ${id}: taken over from ${file}: managed by ${copy} from now on`),
    "the first file's, taken over by the second: nothing else changes",
  );

  // Removed: only what an apply made and the file no longer names.
  // The second file, now smaller: it manages the clients it took over.
  t.equal((await run(['config', 'apply', copy], copyEnv)).code, 0);
  const smaller = write(dir, 'exported.yaml', FILE.replace(/ {2}- client_id: spa[\s\S]*$/, ''));
  const shrunk = await run(['config', 'apply', smaller]);
  t.equal(shrunk.code, 0, shrunk.err);
  t.match(shrunk.out, /^- oidc_client spa$/m);
  const left = (await run(['--json', 'client', 'list'])).json.clients.map((c: { client_id: string }) => c.client_id).sort();
  t.same(left, [byHand.client_id, 'backup-job', 'grafana'].sort());

  const everything = said.join('\n');
  for (const secret of [GRAFANA_SECRET, NEW_GRAFANA_SECRET, BACKUP_SECRET]) t.notOk(everything.includes(secret), 'no secret is ever printed');
  const audit = (await run(['--json', 'audit', '--limit', '200'])).out;
  for (const secret of [GRAFANA_SECRET, NEW_GRAFANA_SECRET, BACKUP_SECRET]) t.notOk(audit.includes(secret), 'nor audited');
  t.match(audit, /client_changed/);
});

t.test("a client from the file signs in at the token endpoint with its reference's secret", async (t) => {
  const s = await providerWith(t);
  const base = s.config.publicUrl;
  const dir = tempDir(t);
  const file = write(
    dir,
    'gatehouse.yaml',
    'version: 1\noidc_clients:\n  - client_id: backup-job\n    name: Backup job\n    secret: {env: BACKUP_SECRET}\n    credentials: true\n    audience: https://api.example.com\n',
  );
  const applied = await cli(s.dataDir, ['config', 'apply', file], { env: { BACKUP_SECRET } });
  t.equal(applied.code, 0, applied.err);
  const got = await clientCredentials(base, 'backup-job', BACKUP_SECRET);
  t.equal(got.status, 200, JSON.stringify(got.body));
  const claims = JSON.parse(Buffer.from(String(got.body.access_token).split('.')[1], 'base64url').toString()) as Record<string, unknown>;
  t.equal(claims.sub, 'backup-job', 'the fixed client_id');
  t.equal(claims.aud, 'https://api.example.com');
  t.equal((await clientCredentials(base, 'backup-job', `${BACKUP_SECRET}x`)).status, 401, 'another secret is refused');

  // The reference now holds another secret: applied, the old one stops working on the running server.
  const next = `${BACKUP_SECRET}-next`;
  const rotated = await cli(s.dataDir, ['config', 'apply', file], { env: { BACKUP_SECRET: next } });
  t.equal(rotated.out, '~ oidc_client backup-job: secret changed\n');
  t.equal((await clientCredentials(base, 'backup-job', BACKUP_SECRET)).status, 401, 'the old secret no longer works');
  t.equal((await clientCredentials(base, 'backup-job', next)).status, 200, 'the new one does');
});

t.test('bad clients and references: exit 1 at the line and column, nothing made', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const outside = tempDir(t);
  write(outside, 'secret', BACKUP_SECRET);
  write(dir, 'short', 'too short');
  const client = (lines: string) => `version: 1\noidc_clients:\n  - client_id: grafana\n    name: Grafana\n${lines}`;
  const redirect = '    redirect_uris: [https://grafana.example.com/cb]\n';
  const cases: Array<[string, string, RegExp]> = [
    [
      'climb',
      client(`    secret: {file: ../../../../../../etc/passwd}\n${redirect}`),
      /climb\.yaml:5:13: the secret file \.\.\/(\.\.\/)+etc\/passwd is outside/,
    ],
    ['absolute', client(`    secret: {file: ${path.join(outside, 'secret')}}\n${redirect}`), /absolute\.yaml:5:13: the secret file \/.* is outside/],
    ['missing env', client(`    secret: {env: NOT_SET_HERE}\n${redirect}`), /missing env\.yaml:5:13: the environment variable NOT_SET_HERE is not set/],
    ['no file', client(`    secret: {file: nowhere}\n${redirect}`), /no file\.yaml:5:13: cannot read the secret file nowhere/],
    ['short', client(`    secret: {file: short}\n${redirect}`), /short\.yaml:5:13: a client secret must be at least 32 characters/],
    ['no secret', client(redirect), /no secret\.yaml:3:5: give the client a secret/],
    ['public secret', client(`    public: true\n    secret: {env: BACKUP_SECRET}\n${redirect}`), /public secret\.yaml:6:13: a public client has no secret/],
    [
      'bad id',
      'version: 1\noidc_clients:\n  - client_id: -grafana\n    name: G\n    public: true\n',
      /bad id\.yaml:3:16: oidc_clients\[0\]\.client_id must match pattern/,
    ],
    [
      'space id',
      'version: 1\noidc_clients:\n  - client_id: "a b"\n    name: G\n    public: true\n',
      /space id\.yaml:3:16: oidc_clients\[0\]\.client_id must match/,
    ],
    [
      'twice',
      `${client(`    public: true\n${redirect}`)}  - client_id: GRAFANA\n    name: G\n    public: true\n${redirect}`,
      /twice\.yaml:7:16: the client GRAFANA is named twice/,
    ],
    [
      'http',
      client('    public: true\n    redirect_uris: [http://grafana.example.com/cb]\n'),
      /http\.yaml:6:20: redirect_uris must be https \(http only for localhost\)/,
    ],
    ['no grant', client('    public: true\n'), /no grant\.yaml:3:5: give at least one redirect_uris, or device, or credentials/],
    ['group', client(`    public: true\n${redirect}    allowed_groups: [nobody]\n`), /group\.yaml:7:22: no group named nobody/],
    [
      'unknown key',
      client(`    public: true\n${redirect}    client_secret: x\n`),
      /unknown key\.yaml:7:5: oidc_clients\[0\] must NOT have additional properties \(client_secret\)/,
    ],
  ];
  for (const [name, text, expected] of cases) {
    const file = write(dir, `${name}.yaml`, text);
    const plan = await cli(s.dataDir, ['config', 'plan', file], { env: { BACKUP_SECRET } });
    t.equal(plan.code, 1, `${name}: exit 1 (${plan.out}${plan.err})`);
    t.match(plan.err, expected, `${name}: ${plan.err.trim()}`);
    t.notOk(plan.err.includes(BACKUP_SECRET) || plan.err.includes('root:'), `${name}: no secret in the message`);
    t.not((await cli(s.dataDir, ['config', 'apply', file], { env: { BACKUP_SECRET } })).code, 0, `${name}: apply refuses it too`);
  }
  t.same((await cli(s.dataDir, ['--json', 'client', 'list'])).json.clients, [], 'nothing was made');

  // A client made by hand whose id differs from the file's only in case: refused, not merged.
  const wiki = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.com/cb'])).json;
  const lower = wiki.client_id.toLowerCase() === wiki.client_id ? wiki.client_id.toUpperCase() : wiki.client_id.toLowerCase();
  const clash = write(dir, 'clash.yaml', `version: 1\noidc_clients:\n  - client_id: ${lower}\n    name: W\n    public: true\n${redirect}`);
  const refused = await cli(s.dataDir, ['config', 'plan', clash]);
  t.equal(refused.code, 1);
  t.match(refused.err, new RegExp(`clash\\.yaml:3:16: a client ${wiki.client_id} exists \\(client ids differing only in case are refused\\)`));
});
