// What an outside review of configuration files found, each kept as a test: a SCIM target named
// like a managed one but for case; removals racing an apply (the check and the write one step,
// serialized with the apply); `export --out` replacing a planted link rather than writing through
// it, as a new 0600 file; a deleted gate group exported as a name no group may take; `config
// schema` without a store; a relative $CREDENTIALS_DIRECTORY not widening where secrets are read.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { tempDir, withAdmin } from '../helpers/server';

const WHSEC = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

t.test('a SCIM target named like a managed one but for case is refused, and never deleted with it', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\nscim_targets:\n  - name: wiki\n    url: https://wiki.example.com/scim/v2\n    token: {env: WIKI_TOKEN}\n');
  t.equal((await cli(s.dataDir, ['config', 'apply', file], { env: { WIKI_TOKEN: 'wiki-token' } })).code, 0);
  const upper = await cli(s.dataDir, ['scim', 'target', 'add', '--name', 'WIKI', '--url', 'https://wiki2.example.com/scim/v2', '--token-stdin'], {
    stdin: 'other-token',
  });
  t.equal(upper.code, 3, upper.err);
  t.match(upper.err, /managed by the configuration file/);
  const other = await cli(s.dataDir, ['scim', 'target', 'add', '--name', 'Other', '--url', 'https://o.example.com/scim/v2', '--token-stdin'], {
    stdin: 'other-token',
  });
  t.equal(other.code, 0, other.err);
  const again = await cli(s.dataDir, ['scim', 'target', 'add', '--name', 'OTHER', '--url', 'https://o2.example.com/scim/v2', '--token-stdin'], {
    stdin: 'other-token',
  });
  t.equal(again.code, 3);
  t.match(again.err, /names differing only in case count as one/);
  t.equal((await cli(s.dataDir, ['config', 'plan', file], { env: { WIKI_TOKEN: 'wiki-token' } })).code, 0, 'the file still plans nothing');
});

t.test('removals racing an apply: the file ends whole (each removal refused, or made before and undone by the apply)', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const file = path.join(dir, 'gatehouse.yaml');
  const urls = Array.from({ length: 8 }, (_, i) => `https://h${i}.example.com/x`);
  fs.writeFileSync(file, `version: 1\nwebhooks:\n${urls.map((u) => `  - {url: "${u}", secret: {env: WS}}\n`).join('')}`);
  const env = { WS: WHSEC };
  for (let round = 0; round < 2; round++) {
    const ids: string[] = [];
    for (const url of urls) {
      const added = await cli(s.dataDir, ['--json', 'webhook', 'add', '--url', url]);
      if (added.code === 0) ids.push(added.json.webhook.id);
    }
    const [applied] = await Promise.all([cli(s.dataDir, ['config', 'apply', file], { env }), ...ids.map((id) => cli(s.dataDir, ['webhook', 'remove', id]))]);
    t.equal(applied.code, 0, applied.err);
    const plan = await cli(s.dataDir, ['config', 'plan', file], { env });
    t.equal(plan.code, 0, `round ${round}: the store matches the file: ${plan.out}`);
    // Let the file go (what it took over is kept), for the next round's hand-made webhooks.
    fs.writeFileSync(path.join(dir, 'gatehouse.yaml'), 'version: 1\n');
    t.equal((await cli(s.dataDir, ['config', 'apply', file], { env })).code, 0);
    for (const w of (await cli(s.dataDir, ['--json', 'webhook', 'list'])).json.webhooks as Array<{ id: string }>)
      await cli(s.dataDir, ['webhook', 'remove', w.id]);
    fs.writeFileSync(file, `version: 1\nwebhooks:\n${urls.map((u) => `  - {url: "${u}", secret: {env: WS}}\n`).join('')}`);
  }
});

t.test('export --out: a new 0600 file, a planted link replaced (never written through), a missing folder said plainly', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const victim = path.join(dir, 'victim.txt');
  fs.writeFileSync(victim, 'keep me', { mode: 0o666 });
  const out = path.join(dir, 'export.yaml');
  fs.symlinkSync(victim, out);
  const r = await cli(s.dataDir, ['config', 'export', '--out', out]);
  t.equal(r.code, 0, r.err);
  t.equal(fs.readFileSync(victim, 'utf8'), 'keep me', "the link's target is untouched");
  t.notOk(fs.lstatSync(out).isSymbolicLink(), 'the link is replaced by the file');
  t.equal(fs.statSync(out).mode & 0o777, 0o600);
  t.match(fs.readFileSync(out, 'utf8'), /^# Gatehouse configuration/);
  const missing = await cli(s.dataDir, ['config', 'export', '--out', path.join(dir, 'no', 'such', 'x.yaml')]);
  t.equal(missing.code, 2);
  t.match(missing.err, /cannot write .*x\.yaml: its folder does not exist/);
  const folder = await cli(s.dataDir, ['config', 'export', '--out', dir]);
  t.equal(folder.code, 2);
  t.match(folder.err, /is a folder: name a file/);
  t.same(
    fs.readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left behind',
  );
});

t.test("a gate's deleted group is exported as a name no group may take, for clients, SPs and apps alike", async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  t.equal((await cli(s.dataDir, ['group', 'create', 'staff'])).code, 0);
  const client = await cli(s.dataDir, [
    '--json',
    'client',
    'add',
    '--name',
    'Wiki',
    '--redirect-uri',
    'https://wiki.example.com/cb',
    '--allowed-group',
    'staff',
  ]);
  t.equal(client.code, 0, client.err);
  t.equal((await cli(s.dataDir, ['app', 'add', '--host', 'photos.example.com', '--allow-group', 'staff'])).code, 0);
  const staff = (await s.db('usergroup').where({ name: 'staff' }).first()).reference_id as string;
  t.equal((await cli(s.dataDir, ['group', 'delete', 'staff'])).code, 0);
  const exported = await cli(s.dataDir, ['config', 'export']);
  t.equal(exported.out.split(`(deleted group ${staff})`).length - 1, 2, 'the client and the app');
  const made = await cli(s.dataDir, ['group', 'create', `(deleted group ${staff})`]);
  t.equal(made.code, 2, 'no group may take the name');
  const file = path.join(dir, 'exported.yaml');
  fs.writeFileSync(file, exported.out);
  const plan = await cli(s.dataDir, ['config', 'plan', file], {
    env: {
      [`GATEHOUSE_CLIENT_SECRET_${String(client.json.client_id)
        .toUpperCase()
        .replace(/[^A-Z0-9]/g, '_')}`]: 'x'.repeat(40),
    },
  });
  t.equal(plan.code, 1);
  t.match(plan.err, /this gate's group was deleted before the file was exported; name the group that may pass/);
});

t.test('config schema needs no store; a relative $CREDENTIALS_DIRECTORY is not a place secrets are read from', async (t) => {
  const dir = tempDir(t);
  const schema = await cli(path.join(dir, 'no-store-here'), ['config', 'schema']);
  t.equal(schema.code, 0, schema.err);
  t.equal(JSON.parse(schema.out).title, 'Gatehouse configuration file');
  t.notOk(fs.existsSync(path.join(dir, 'no-store-here')), 'nothing made');

  const s = await withAdmin(t);
  const config = path.join(dir, 'conf');
  fs.mkdirSync(config);
  fs.writeFileSync(path.join(dir, 'secret'), 'x'.repeat(40));
  fs.writeFileSync(
    path.join(config, 'gatehouse.yaml'),
    'version: 1\noidc_clients:\n  - client_id: c1\n    name: C\n    secret: {file: ../secret}\n    credentials: true\n',
  );
  const cwd = process.cwd();
  process.chdir(dir);
  t.teardown(() => process.chdir(cwd));
  const r = await cli(s.dataDir, ['config', 'plan', path.join(config, 'gatehouse.yaml')], { env: { CREDENTIALS_DIRECTORY: '.' } });
  t.equal(r.code, 1);
  t.match(r.err, /is outside the configuration file's folder/);
});
