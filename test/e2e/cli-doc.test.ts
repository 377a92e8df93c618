// docs/cli.md's nested-groups lines, run as written against the packaged executable: each
// command in turn, and every `#   ` line after it found in what it printed (an `(exit N)` at its
// end is the exit code the command must end with). And docs/configuration.md's file, planned and
// applied by the executable (its YAML and JSON Schema libraries load inside it), its client's
// secret read from a file beside it.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { exeFolder, runExe } from '../helpers/exe';

/** SP metadata as Nextcloud's SAML app offers it for download (its shape: entity id, ACS, SLO). */
const NEXTCLOUD_METADATA = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://cloud.example.com/apps/user_saml/saml/metadata">
  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://cloud.example.com/apps/user_saml/saml/sls"/>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://cloud.example.com/apps/user_saml/saml/acs" index="1"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;

t.test("docs/cli.md's nested groups work as written", async (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'cli.md'), 'utf8');
  const block = /<!-- nested-groups:[^\n]*-->\n```sh\n([\s\S]*?)\n```/.exec(doc)![1].split('\n');
  const { dir, exe, env } = exeFolder(t);
  const steps: Array<{ line: string; said: string[] }> = [];
  for (const line of block) {
    if (line.startsWith('#')) steps[steps.length - 1].said.push(line.replace(/^#\s+/, ''));
    else steps.push({ line, said: [] });
  }
  t.ok(steps.length >= 10, 'the block has its steps');
  for (const { line, said } of steps) {
    const piped = /^printf '([^']*)' \| gatehouse (.*)$/.exec(line);
    const words = (piped ? piped[2] : line.replace(/^gatehouse /, '')).split(' ');
    const r = await runExe(exe, words, { env, cwd: dir, stdin: piped?.[1] });
    const printed = r.stdout + r.stderr;
    const exit = said.map((s) => /\s+\(exit (\d+)\)$/.exec(s)).find(Boolean);
    t.equal(r.code, exit ? Number(exit[1]) : 0, `${line}: exit code (${r.stderr.trim()})`);
    for (const s of said) {
      const expected = s.replace(/\s+\(exit \d+\)$/, '');
      t.ok(printed.includes(expected), `${line}: prints ${expected}\n${printed}`);
    }
  }
});

t.test("docs/configuration.md's file, planned and applied as written", async (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  const yaml = /<!-- config-file:[^\n]*-->\n```yaml\n([\s\S]*?)\n```/.exec(doc)![1];
  const { dir, exe, env } = exeFolder(t);
  fs.writeFileSync(path.join(dir, 'gatehouse.yaml'), yaml + '\n');
  // The client's secret, where its reference says: a file beside the configuration file.
  const secret = 'a-client-secret-of-at-least-32-characters';
  fs.writeFileSync(path.join(dir, 'grafana-client-secret'), secret + '\n', { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'audit-webhook-secret'), `whsec_${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 });
  fs.writeFileSync(path.join(dir, 'nextcloud-metadata.xml'), NEXTCLOUD_METADATA);
  const fileEnv = { ...env, GITLAB_CLIENT_SECRET: 'gitlab-secret', WIKI_SCIM_TOKEN: 'wiki-token' };
  const run = (...args: string[]) => runExe(exe, args, { env: fileEnv, cwd: dir, stdin: 'a long admin password' });
  t.equal((await run('bootstrap-admin', '--email', 'admin@example.com', '--password-stdin')).code, 0);
  const plan = await run('config', 'plan', 'gatehouse.yaml');
  t.equal(plan.code, 2, plan.stderr);
  t.match(plan.stdout, /^\+ group staff$/m);
  t.match(plan.stdout, /^~ group staff: groups inside: engineering \(was none\)$/m);
  t.match(plan.stdout, /^\+ oidc_client grafana$/m);
  t.match(plan.stdout, /^\+ saml_sp https:\/\/cloud\.example\.com\/apps\/user_saml\/saml\/metadata$/m);
  t.match(plan.stdout, /^\+ forward_app photos\.example\.com$/m);
  t.match(plan.stdout, /^\+ provider gitlab$/m);
  t.match(plan.stdout, /^\+ webhook https:\/\/audit\.example\.com\/gatehouse$/m);
  t.match(plan.stdout, /^\+ scim_target wiki$/m);
  const applied = await run('config', 'apply', 'gatehouse.yaml');
  t.equal(applied.code, 0, applied.stderr);
  t.match(JSON.parse((await run('--json', 'saml', 'sp', 'show', 'https://cloud.example.com/apps/user_saml/saml/metadata')).stdout), {
    name: 'Nextcloud',
    nameid: 'username',
    acs_urls: ['https://cloud.example.com/apps/user_saml/saml/acs'],
    allowed_groups: ['staff'],
  });
  const again = await run('config', 'plan', 'gatehouse.yaml');
  t.equal(again.code, 0, 'nothing left to change');
  t.equal(again.stdout, 'nothing to change\n');
  const exported = await run('config', 'export', '--out', 'exported.yaml');
  t.equal(exported.code, 0, exported.stderr);
  const written = fs.readFileSync(path.join(dir, 'exported.yaml'), 'utf8');
  t.match(written, /- name: staff\n {4}groups:\n {6}- engineering\n/);
  t.match(written, /- client_id: grafana\n {4}name: Grafana\n {4}secret: \{ file: grafana-client-secret \}\n/, 'the reference, as the file gave it');
  t.notOk(written.includes(secret), 'the secret is not exported');
  // The export, planned on the store it came from: nothing to change (it takes each object over).
  const replanned = await run('config', 'plan', 'exported.yaml');
  t.equal(replanned.code, 0, replanned.stdout + replanned.stderr);
  t.equal(replanned.stdout.split('\n')[0], 'nothing to change');
  t.notMatch(replanned.stdout, /^[+~-] /m);
  const show = await run('--json', 'client', 'show', 'grafana');
  t.same(JSON.parse(show.stdout).allowed_groups, ['staff']);
  const schema = await run('config', 'schema');
  t.equal(JSON.parse(schema.stdout).title, 'Gatehouse configuration file');
});
