// SAML service providers and upstream sign-in providers in a configuration file. An SP from its
// metadata file (beside the configuration file) that node-saml signs in to; a second apply that
// changes nothing; a change said in the file's words; export writing its endpoints one by one and
// a round trip into an empty store; metadata that names another SP, lies outside the allowed
// folders, or comes with endpoints refused at its line. A provider whose client secret comes from
// a reference (a changed secret said without its value), read-only to the shell, removed when the
// file drops it, and kept (the apply refused) while an account signs in only through it.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, tempDir, withAdmin } from '../helpers/server';
import { browse, nodeSamlSp, sessionCookie, SP_ENTITY, spKeyPair } from '../helpers/saml';

const config = (extra: string) => `version: 1
groups:
  - name: staff
saml_sps:
  - entity_id: ${SP_ENTITY}
    name: Wiki
    metadata: {file: wiki-metadata.xml}
    allowed_groups: [staff]
${extra}`;

t.test('an SP from its metadata file: apply, sign in with node-saml, apply again, change, export, round trip', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const dir = tempDir(t);
  const sp = await nodeSamlSp(s, { signing: spKeyPair(t) });
  fs.writeFileSync(path.join(dir, 'wiki-metadata.xml'), sp.metadata);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, config(''));

  const plan = await cli(s.dataDir, ['config', 'plan', file]);
  t.equal(plan.code, 2, plan.err);
  t.match(plan.out, new RegExp(`^\\+ saml_sp ${SP_ENTITY.replace(/\./g, '\\.')}$`, 'm'));
  const applied = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(applied.code, 0, applied.err);
  t.equal((await cli(s.dataDir, ['group', 'add', 'staff', 'ada@example.com'])).code, 0);

  // The SP the file made signs people in (its signed requests checked with the metadata's certificate).
  const posted = await browse(await sp.saml.getAuthorizeUrlAsync('relay', undefined, {}), await sessionCookie(s, 'ada@example.com'));
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted.fields.SAMLResponse! });
  t.equal(profile?.nameID, 'ada@example.com', 'node-saml accepts the Response');

  t.equal((await cli(s.dataDir, ['config', 'plan', file])).code, 0, 'applied: nothing to change');
  const byHand = await cli(s.dataDir, ['saml', 'sp', 'remove', SP_ENTITY]);
  t.equal(byHand.code, 3, 'a managed SP is the file’s');
  t.match(byHand.err, /managed by the configuration file .*gatehouse\.yaml/);
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'set', SP_ENTITY, '--two-factor', 'on'])).code, 3);

  fs.writeFileSync(file, config('').replace('    allowed_groups: [staff]\n', '    allowed_groups: [staff]\n    two_factor: true\n    nameid: persistent\n'));
  const changed = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(changed.code, 0, changed.err);
  t.match(changed.out, /^~ saml_sp https:\/\/app\.example\.test\/saml: nameid: persistent \(was email\); two_factor: yes$/m);

  // Exported with its endpoints one by one (the metadata was read once); the round trip is exact.
  const exported = await cli(s.dataDir, ['config', 'export']);
  t.equal(exported.code, 0, exported.err);
  t.match(
    exported.out,
    /saml_sps:\n {2}- entity_id: https:\/\/app\.example\.test\/saml\n {4}name: Wiki\n {4}acs:\n {6}- url: http:\/\/localhost:4999\/saml\/acs/,
  );
  t.match(exported.out, /certificate: MII/);
  t.match(exported.out, /authn_requests_signed: true/);
  fs.writeFileSync(path.join(dir, 'exported.yaml'), exported.out);
  // Its own export, as another file, only takes over (the SP from gatehouse.yaml, the group): nothing changes.
  const own = await cli(s.dataDir, ['config', 'plan', path.join(dir, 'exported.yaml')]);
  t.equal(own.code, 0, own.err);
  t.match(own.out, /^ {2}saml_sp https:\/\/app\.example\.test\/saml: taken over from .*gatehouse\.yaml: managed by .*exported\.yaml from now on$/m);
  t.same(
    own.out.split('\n').filter((l) => l !== '' && !/: taken over(:| from)/.test(l)),
    ['nothing to change'],
    'nothing but take-overs',
  );
  const other = await withAdmin(t);
  const into = await cli(other.dataDir, ['config', 'apply', path.join(dir, 'exported.yaml')]);
  t.equal(into.code, 0, into.err);
  t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');

  // Dropped from the file: removed (an apply made it).
  fs.writeFileSync(file, 'version: 1\ngroups:\n  - name: staff\n');
  const dropped = await cli(s.dataDir, ['config', 'apply', file]);
  t.match(dropped.out, /^- saml_sp https:\/\/app\.example\.test\/saml$/m);
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'show', SP_ENTITY])).code, 4, 'gone');
});

t.test('an SP made by hand is taken over, and let go (kept) when the file drops it', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'add', '--entity-id', 'https://hand.example/sp', '--acs-url', 'https://hand.example/acs'])).code, 0);
  const file = path.join(dir, 'gatehouse.yaml');
  fs.writeFileSync(file, 'version: 1\nsaml_sps:\n  - entity_id: https://hand.example/sp\n    acs: [{url: https://hand.example/acs}]\n');
  const taken = await cli(s.dataDir, ['config', 'apply', file]);
  t.equal(taken.code, 0, taken.err);
  t.match(taken.out, /^ {2}saml_sp https:\/\/hand\.example\/sp: taken over: managed by .*gatehouse\.yaml from now on$/m);
  fs.writeFileSync(file, 'version: 1\n');
  const released = await cli(s.dataDir, ['config', 'apply', file]);
  t.match(released.out, /^- saml_sp https:\/\/hand\.example\/sp: no longer managed \(made by hand: kept\)$/m);
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'show', 'https://hand.example/sp'])).code, 0, 'kept');
  t.equal((await cli(s.dataDir, ['saml', 'sp', 'remove', 'https://hand.example/sp'])).code, 0, "the shell's again");
});

t.test('bad SPs: refused at their line, nothing made', async (t) => {
  const s = await withAdmin(t);
  const dir = tempDir(t);
  const sp = await nodeSamlSp(s);
  fs.writeFileSync(path.join(dir, 'md.xml'), sp.metadata);
  const outside = tempDir(t);
  fs.writeFileSync(path.join(outside, 'md.xml'), sp.metadata);
  const cases: Array<[string, string, RegExp]> = [
    [
      'other',
      'version: 1\nsaml_sps:\n  - entity_id: https://other.example/sp\n    metadata: {file: md.xml}\n',
      /other\.yaml:4:15: the metadata names the SP https:\/\/app\.example\.test\/saml, not https:\/\/other\.example\/sp/,
    ],
    [
      'outside',
      `version: 1\nsaml_sps:\n  - entity_id: ${SP_ENTITY}\n    metadata: {file: ${path.join(outside, 'md.xml')}}\n`,
      /outside\.yaml:4:15: the metadata file .* is outside the configuration file's folder/,
    ],
    [
      'both',
      `version: 1\nsaml_sps:\n  - entity_id: ${SP_ENTITY}\n    metadata: {file: md.xml}\n    acs: [{url: https://x.example/acs}]\n`,
      /both\.yaml:5:10: give metadata, or acs and the other endpoints, not both/,
    ],
    ['neither', `version: 1\nsaml_sps:\n  - entity_id: ${SP_ENTITY}\n`, /neither\.yaml:3:5: give the SP's metadata/],
    [
      'fragment',
      'version: 1\nsaml_sps:\n  - entity_id: https://x.example/sp\n    acs: [{url: "https://x.example/acs#top"}]\n',
      /fragment\.yaml:4:10: acs must not have a #fragment/,
    ],
    [
      'cert',
      `version: 1\nsaml_sps:\n  - entity_id: https://x.example/sp\n    acs: [{url: https://x.example/acs}]\n    certificate: ${'A'.repeat(120)}\n`,
      /cert\.yaml:5:18: certificate is not an X\.509 certificate/,
    ],
    [
      'signed',
      'version: 1\nsaml_sps:\n  - entity_id: https://x.example/sp\n    acs: [{url: https://x.example/acs}]\n    authn_requests_signed: true\n',
      /signed\.yaml:3:5: certificate is needed to check signed AuthnRequests/,
    ],
    [
      'group',
      'version: 1\nsaml_sps:\n  - entity_id: https://x.example/sp\n    acs: [{url: https://x.example/acs}]\n    allowed_groups: [nobody]\n',
      /group\.yaml:5:22: no group named nobody/,
    ],
    [
      'twice',
      'version: 1\nsaml_sps:\n  - entity_id: https://x.example/sp\n    acs: [{url: https://x.example/acs}]\n  - entity_id: https://x.example/sp\n    acs: [{url: https://x.example/acs}]\n',
      /twice\.yaml:5:16: the SP https:\/\/x\.example\/sp is named twice/,
    ],
  ];
  for (const [name, text, expected] of cases) {
    const file = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(file, text);
    const r = await cli(s.dataDir, ['config', 'apply', file]);
    t.equal(r.code, name === 'group' ? 4 : 2, `${name}: refused ${r.err}`);
    t.match(r.err, expected, name);
  }
  t.equal((await cli(s.dataDir, ['--json', 'saml', 'sp', 'list'])).json.length ?? 0, 0, 'nothing made');
});

const PROVIDERS = `version: 1
providers:
  - name: gitlab
    issuer: https://gitlab.example.com
    client_id: gatehouse
    client_secret: {env: GITLAB_SECRET}
    display_name: GitLab
    trust_email: true
`;

t.test(
  'providers: a secret by reference, said changed without its value, read-only to the shell, round trip, removal kept while someone depends on it',
  async (t) => {
    const s = await withAdmin(t);
    const dir = tempDir(t);
    const file = path.join(dir, 'gatehouse.yaml');
    fs.writeFileSync(file, PROVIDERS);
    const env = { GITLAB_SECRET: 'first-secret-value' };
    const applied = await cli(s.dataDir, ['config', 'apply', file], { env });
    t.equal(applied.code, 0, applied.err);
    t.match(applied.out, /^\+ provider gitlab$/m);
    const shown = await cli(s.dataDir, ['--json', 'provider', 'show', 'gitlab']);
    t.match(shown.json, {
      name: 'gitlab',
      display_name: 'GitLab',
      issuer: 'https://gitlab.example.com',
      client_id: 'gatehouse',
      trust_email: true,
      scopes: ['email', 'profile'],
    });
    t.equal((await s.db('upstream_provider').where({ name: 'gitlab' }).first()).client_secret, 'first-secret-value', 'the secret its reference holds');
    t.equal((await cli(s.dataDir, ['config', 'plan', file], { env })).code, 0, 'applied: nothing to change');

    const rotated = await cli(s.dataDir, ['config', 'apply', file], { env: { GITLAB_SECRET: 'second-secret-value' } });
    t.match(rotated.out, /^~ provider gitlab: client secret changed$/m);
    t.notMatch(rotated.out + rotated.err, /second-secret-value|first-secret-value/, 'never the value');
    // Unset where the file is applied: the reference is the one applied before, so the stored secret stands, said so.
    const unset = await cli(s.dataDir, ['config', 'apply', file]);
    t.equal(unset.code, 0, unset.err);
    t.equal(unset.out, 'nothing to change\n  provider gitlab: client_secret: the environment variable GITLAB_SECRET is not set: the stored one is kept\n');
    // A reference the store has not seen must be read.
    fs.writeFileSync(path.join(dir, 'renamed.yaml'), PROVIDERS.replace('GITLAB_SECRET', 'GITLAB_CLIENT_SECRET'));
    const renamed = await cli(s.dataDir, ['config', 'apply', path.join(dir, 'renamed.yaml')]);
    t.equal(renamed.code, 2);
    t.match(renamed.err, /renamed\.yaml:6:20: the environment variable GITLAB_CLIENT_SECRET is not set/);

    const byHand = await cli(s.dataDir, ['provider', 'remove', 'gitlab']);
    t.equal(byHand.code, 3);
    t.match(byHand.err, /managed by the configuration file/);

    const exported = await cli(s.dataDir, ['config', 'export']);
    t.match(exported.out, /client_secret: \{ env: GITLAB_SECRET \}\n/, 'the reference the file gave');
    t.notMatch(exported.out, /second-secret-value/);
    fs.writeFileSync(path.join(dir, 'exported.yaml'), exported.out);
    const other = await withAdmin(t);
    t.equal((await cli(other.dataDir, ['config', 'apply', path.join(dir, 'exported.yaml')], { env: { GITLAB_SECRET: 'x' } })).code, 0);
    t.equal((await cli(other.dataDir, ['config', 'export'])).out, exported.out, 'the same document');

    // Someone signs in only through it: dropping it from the file is refused, nothing changed.
    await setSignup(s, s.adminToken, 2097057);
    await s.signup('only-gitlab@example.com');
    await s.db('user_account').where({ email: 'only-gitlab@example.com' }).update({ password: '' });
    const provider = await s.db('upstream_provider').where({ name: 'gitlab' }).first();
    const user = await s.db('user_account').where({ email: 'only-gitlab@example.com' }).first();
    await s
      .db('linked_identity')
      .insert({ reference_id: '00000000-0000-4000-8000-000000000001', account_id: user.id, provider_id: provider.id, subject: 'g-1', created_at: Date.now() });
    fs.writeFileSync(file, 'version: 1\n');
    const refused = await cli(s.dataDir, ['config', 'apply', file]);
    t.equal(refused.code, 3, refused.out);
    t.match(refused.err, /the provider gitlab is no longer in .*gatehouse\.yaml, but 1 account signs in only through it/);
    t.equal((await cli(s.dataDir, ['provider', 'show', 'gitlab'])).code, 0, 'kept');

    // With another way in, it goes.
    await s.db('linked_identity').del();
    const removed = await cli(s.dataDir, ['config', 'apply', file]);
    t.equal(removed.code, 0, removed.err);
    t.match(removed.out, /^- provider gitlab$/m);
  },
);
