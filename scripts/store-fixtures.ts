// Makes test/fixtures/stores/: a SQLite store at each earlier schema (every migration but the
// last), each holding data in every table it has. test/e2e/upgrade.test.ts opens each with
// today's code, migrates it, and checks that nothing was lost.
//
//   node --import tsx scripts/store-fixtures.ts
//
// How: today's Gatehouse makes a store and fills it through its own commands (accounts, groups,
// memberships, clients, keys, apps, SAML, SCIM, webhooks, invitations, app passwords, API keys,
// queued deliveries), and rows are written directly into the tables no command fills (sessions,
// passkeys, linked identities, challenges...). Then, for each earlier schema, a store is made by
// the migrations up to it, and every row is copied into it that its tables can hold: its columns
// that exist then, rows whose references exist then. Rows the migrations themselves write
// (actions, system groups) are theirs, not copied. Run it again only when adding a migration: the
// files are the record of what each schema looked like when it was current.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { run } from '../src/cli/main';
import { MIGRATIONS } from '../src/store/migrations';
import { sqliteFileKnex } from '../src/store/connection';

const root = path.resolve(__dirname, '..');
const out = path.join(root, 'test', 'fixtures', 'stores');
export const FIXTURE_PASSWORD = 'fixture password 1';

async function gatehouse(dataDir: string, args: string[], stdin = ''): Promise<unknown> {
  let stdout = '';
  let stderr = '';
  const code = await run(
    ['node', 'gatehouse', '--data-dir', dataDir, '--db', '', '--json', ...args],
    { serve: async () => {} },
    { out: (t) => void (stdout += t), err: (t) => void (stderr += t), env: { PW: FIXTURE_PASSWORD }, readStdin: async () => stdin },
  );
  if (code !== 0) throw new Error(`gatehouse ${args.join(' ')}: exit ${code}: ${stderr}`);
  return stdout ? JSON.parse(stdout) : null;
}

const sqlite = (file: string): Knex => sqliteFileKnex(file, '', 10000);

async function tablesOf(k: Knex): Promise<string[]> {
  const rows = await k.raw(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'knex\\_%' ESCAPE '\\' AND name NOT LIKE '%\\_fts%' ESCAPE '\\' ORDER BY rowid`,
  );
  return rows.map((r: { name: string }) => r.name);
}

interface Column {
  name: string;
  type: string;
  notnull: number;
  dflt_value: unknown;
  pk: number;
}
const columnsOf = async (k: Knex, table: string): Promise<Column[]> => k.raw(`PRAGMA table_info(\`${table}\`)`);
const foreignKeysOf = async (k: Knex, table: string): Promise<Array<{ table: string; from: string }>> => k.raw(`PRAGMA foreign_key_list(\`${table}\`)`);

/** Today's store, made and filled by today's Gatehouse. */
async function source(dir: string): Promise<string> {
  const pw = ['--password-env', 'PW'];
  await gatehouse(dir, ['bootstrap-admin', '--email', 'admin@example.com', '--name', 'Ada Admin', ...pw]);
  await gatehouse(dir, ['user', 'create', '--email', 'bob@example.com', '--name', 'Bob', ...pw]);
  await gatehouse(dir, ['user', 'create', '--email', 'carol@example.com', '--name', 'Carol', ...pw]);
  await gatehouse(dir, ['user', 'set-username', 'bob@example.com', 'bob']);
  await gatehouse(dir, ['user', 'disable', 'carol@example.com']);
  await gatehouse(dir, ['group', 'create', 'staff']);
  await gatehouse(dir, ['group', 'add', 'staff', 'bob@example.com']);
  await gatehouse(dir, ['group', 'create', 'engineering']);
  await gatehouse(dir, ['group', 'add-group', 'staff', 'engineering']);
  fs.writeFileSync(path.join(dir, 'gatehouse.yaml'), 'version: 1\ngroups:\n  - name: managed-by-file\n');
  await gatehouse(dir, ['config', 'apply', path.join(dir, 'gatehouse.yaml')]);
  await gatehouse(dir, ['client', 'add', '--name', 'Wiki', '--redirect-uri', 'https://wiki.example.com/callback']);
  await gatehouse(dir, ['keys', 'rotate']);
  await gatehouse(dir, ['app', 'add', '--host', 'files.example.com', '--bypass-path', '/share']);
  await gatehouse(dir, ['webhook', 'add', '--url', 'https://hooks.example.com/gatehouse']);
  await gatehouse(dir, ['user', 'app-password', 'add', 'bob@example.com', '--name', 'nextcloud']);
  await gatehouse(dir, ['user', 'api-key', 'add', 'admin@example.com', '--name', 'script']);
  await gatehouse(
    dir,
    ['user', 'ssh-key', 'add', 'bob@example.com', '-'],
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE3/+bUL3vO5SYk1wD1s1QLdjVI1nOqGCqsRnCPsbdKx bob@laptop',
  );
  await gatehouse(dir, ['user', 'set-shell', 'bob@example.com', '/usr/bin/zsh']);
  await gatehouse(dir, ['user', 'invite', 'dora@example.com', '--group', 'staff']);
  await gatehouse(dir, ['scim', 'token', 'add', '--name', 'okta']);
  const metadata = path.join(dir, 'sp.xml');
  fs.writeFileSync(
    metadata,
    `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://wiki.example.com/saml"><md:SPSSODescriptor AuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://wiki.example.com/saml/acs" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>`,
  );
  await gatehouse(dir, ['saml', 'sp', 'add', '--metadata', metadata, '--name', 'Wiki SAML']);
  await gatehouse(dir, ['saml', 'cert', 'list']);
  // Another change the webhook hears about: a queued delivery (no server runs to send it).
  await gatehouse(dir, ['user', 'create', '--email', 'erin@example.com', '--name', 'Erin', ...pw]);

  // The tables no command fills: rows as the server would write them.
  const file = path.join(dir, 'gatehouse.sqlite');
  const k = sqlite(file);
  const now = Date.now();
  const later = now + 30 * 86400_000;
  const [bob] = await k('user_account').where({ email_key: 'bob@example.com' }).select('id', 'reference_id', 'auth_version');
  await k('account_token').insert({
    account_id: bob.id,
    purpose: 'verify_email',
    token_hash: 'a'.repeat(64),
    email_key: 'bob@example.com',
    expires_at: later,
    created_at: now,
  });
  await k('mail_code').insert({
    handle_hash: 'c'.repeat(64),
    binding_hash: 'd'.repeat(64),
    code_hash: 'e'.repeat(64),
    email_key: 'bob@example.com',
    account_id: bob.id,
    tries: 1,
    created_at: now,
    expires_at: now + 600_000,
    used_at: null,
  });
  // What a running server records for the shell.
  await k('gatehouse_setting').insert({ name: 'public_url', value: 'https://id.example.com' });
  await k('rate_counter').insert({ counter_key: 'signin:ip:192.0.2.1', window_start: now, hits: 2 });
  await k('recovery_code').insert({ account_id: bob.id, code_hash: 'b'.repeat(64), created_at: now });
  await k('session').insert({
    id: 's'.repeat(32),
    account_id: bob.id,
    auth_version: bob.auth_version,
    created_at: now,
    last_used_at: now,
    expires_at: later,
    client: null,
    user_agent: 'fixture',
    two_factor: 0,
    method: 'password',
    authenticated_at: now,
    upstream_amr: null,
    second_factor: null,
  });
  await k('refresh_token').insert({ token_hash: 'c'.repeat(64), session_id: 's'.repeat(32), created_at: now });
  await k('oidc_payload').insert({
    model: 'Grant',
    id: 'grant-1',
    payload: JSON.stringify({ accountId: bob.reference_id, clientId: 'wiki' }),
    account: bob.reference_id,
    client_id: 'wiki',
    expires_at: later,
  });
  await k('known_signin').insert({ account_id: bob.id, signin_key: '192.0.2.1', last_at: now });
  await k('passkey').insert({
    reference_id: '00000000-0000-4000-8000-000000000001',
    account_id: bob.id,
    credential_id: 'Zml4dHVyZS1wYXNza2V5',
    public_key: 'pQECAyYgASFYIBfixturefixturefixturefixturefixtureAAAAIlggfixturefixturefixturefixturefixtureAAAA',
    counter: 3,
    transports: '["internal"]',
    name: 'laptop',
    backed_up: 1,
    created_at: now,
  });
  await k('webauthn_challenge').insert({ challenge: 'd'.repeat(43), purpose: 'signin', account_id: null, expires_at: later });
  const [provider] = await k('upstream_provider')
    .insert({
      name: 'corp',
      display_name: 'Corp SSO',
      issuer: 'https://sso.example.com',
      client_id: 'gatehouse',
      client_secret: 'fixture-secret',
      scopes: '["email","profile"]',
      trust_email: 1,
      created_at: now,
    })
    .returning('id');
  const providerId = typeof provider === 'object' ? provider.id : provider;
  await k('linked_identity').insert({
    reference_id: '00000000-0000-4000-8000-000000000002',
    account_id: bob.id,
    provider_id: providerId,
    subject: 'bob-at-corp',
    email: 'bob@example.com',
    created_at: now,
  });
  await k('upstream_flow').insert({
    state_hash: 'e'.repeat(64),
    provider_id: providerId,
    binding: 'f'.repeat(64),
    nonce: 'n'.repeat(32),
    code_verifier: 'v'.repeat(64),
    purpose: 'signin',
    carry: '{}',
    expires_at: later,
  });
  const [sp] = await k('saml_sp').select('id');
  await k('saml_request').insert({
    handle: 'h'.repeat(32),
    sp_id: sp.id,
    request_id: '_fixture',
    acs_url: 'https://wiki.example.com/saml/acs',
    force_authn: 0,
    created_at: now,
    expires_at: later,
  });
  await k('saml_signin').insert({ session_id: 's'.repeat(32), sp_id: sp.id, name_id: bob.reference_id, session_index: '_fixture-index', created_at: now });
  await k('saml_logout_request').insert({ sp_id: sp.id, request_id: '_fixture-logout', expires_at: later });
  await k('oidc_signin').insert({ session_id: 's'.repeat(32), client_id: (await k('oidc_client').first()).client_id, created_at: now });
  const [target] = await k('scim_target')
    .insert({
      reference_id: '00000000-0000-4000-8000-000000000003',
      name: 'app',
      url: 'https://app.example.com/scim/v2',
      token: 'fixture-token',
      groups: '[]',
      created_at: now,
    })
    .returning('id');
  const targetId = typeof target === 'object' ? target.id : target;
  await k('scim_pushed').insert({ target_id: targetId, reference_id: bob.reference_id, kind: 'user', remote_id: 'remote-bob' });
  await k('delivery').insert({
    message_id: 'fixture-scim-message',
    kind: 'scim',
    topic: 'user',
    payload: JSON.stringify({ reference_id: bob.reference_id }),
    state: 'pending',
    attempts: 0,
    next_at: now,
    created_at: now,
    scim_target_id: targetId,
  });
  const [source] = await k('directory_source')
    .insert({
      name: 'corp',
      url: 'ldaps://ldap.example.com',
      start_tls: 0,
      ca_certificate: null,
      bind_dn: 'cn=reader,dc=example,dc=com',
      bind_password: 'fixture-bind-password',
      base_dn: 'dc=example,dc=com',
      user_filter: '(objectClass=inetOrgPerson)',
      group_filter: '(objectClass=groupOfNames)',
      uid_attribute: 'uid',
      id_attribute: 'entryUUID',
      every_seconds: 3600,
      keep_passwords: 0,
      next_sync_at: later,
      last_sync_at: now,
      last_status: 'ok',
      last_result: '{}',
      created_at: now,
    })
    .returning('id');
  await k('source_entry').insert({
    source_id: typeof source === 'object' ? source.id : source,
    kind: 'person',
    entry_id: 'a1cb4f58-7f07-1041-9dc8-b186a7c6d4d7',
    dn: 'uid=bob,ou=people,dc=example,dc=com',
    account_id: bob.id,
    usergroup_id: null,
    gone_at: null,
    first_signin_at: null,
  });
  const empty: string[] = [];
  for (const table of await tablesOf(k)) if (Number((await k(table).count({ n: '*' }))[0].n) === 0) empty.push(table);
  await k.destroy();
  if (empty.length > 0) throw new Error(`tables left empty: ${empty.join(', ')}`);
  return file;
}

/** The rows the migrations write themselves (in a store no command has touched), by primary key: not copied. */
async function migrationRows(dir: string): Promise<Map<string, Set<string>>> {
  await gatehouse(dir, ['migrate']);
  const k = sqlite(path.join(dir, 'gatehouse.sqlite'));
  const made = new Map<string, Set<string>>();
  for (const table of await tablesOf(k)) {
    const key = await primaryKey(k, table);
    made.set(table, new Set((await k(table).select('*')).map((r: Record<string, unknown>) => JSON.stringify(key.map((c) => r[c])))));
  }
  await k.destroy();
  return made;
}

async function primaryKey(k: Knex, table: string): Promise<string[]> {
  const cols = await columnsOf(k, table);
  const key = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  return (key.length > 0 ? key : cols).map((c) => c.name);
}

async function atSchema(n: number, file: string): Promise<void> {
  const k = sqlite(file);
  await k.migrate.latest({
    migrationSource: { getMigrations: async () => MIGRATIONS.slice(0, n), getMigrationName: ([name]) => name, getMigration: async ([, m]) => m },
  });
  await k.destroy();
}

async function copyInto(from: string, to: string, theirs: Map<string, Set<string>>): Promise<Record<string, number>> {
  const src = sqlite(from);
  const dst = sqlite(to);
  const counts: Record<string, number> = {};
  try {
    const present = new Set(await tablesOf(dst));
    await dst.raw('PRAGMA foreign_keys = ON');
    for (const table of await tablesOf(src)) {
      if (!present.has(table)) continue;
      const have = new Map((await columnsOf(dst, table)).map((c) => [c.name, c]));
      const references = (await foreignKeysOf(src, table)).filter((f) => !have.has(f.from) || !present.has(f.table)).map((f) => f.from);
      const key = await primaryKey(src, table);
      for (const row of (await src(table).select('*')) as Array<Record<string, unknown>>) {
        if (theirs.get(table)?.has(JSON.stringify(key.map((c) => row[c])))) continue;
        // A reference the schema cannot hold yet (a SCIM target's message before SCIM): the row waits for its feature.
        if (references.some((col) => row[col] !== null && row[col] !== undefined)) continue;
        const kept: Record<string, unknown> = {};
        for (const [col, value] of Object.entries(row)) if (have.has(col)) kept[col] = value;
        for (const c of have.values()) {
          if (c.name in kept || !c.notnull || c.dflt_value !== null || c.pk) continue;
          kept[c.name] = /int|bool/i.test(c.type) ? 0 : ''; // a column later dropped or renamed
        }
        await dst(table).insert(kept).onConflict().ignore();
      }
    }
    // What the fixture holds: the migrations' own rows and the copied ones.
    for (const table of present) counts[table] = Number((await dst(table).count({ n: '*' }))[0].n);
    await dst.raw('VACUUM');
  } finally {
    await src.destroy();
    await dst.destroy();
  }
  return counts;
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-fixtures-'));
  try {
    fs.mkdirSync(path.join(work, 'source'));
    fs.mkdirSync(path.join(work, 'bare'));
    const filled = await source(path.join(work, 'source'));
    const theirs = await migrationRows(path.join(work, 'bare'));
    fs.rmSync(out, { recursive: true, force: true });
    fs.mkdirSync(out, { recursive: true });
    const manifest: Array<{ file: string; schema: string; rows: Record<string, number> }> = [];
    for (let n = 1; n < MIGRATIONS.length; n++) {
      const schema = MIGRATIONS[n - 1][0];
      const file = path.join(work, `${schema}.sqlite`);
      await atSchema(n, file);
      const rows = await copyInto(filled, file, theirs);
      const name = `${schema}.sqlite.gz`;
      execFileSync('gzip', ['-9', '-n', '-c', file], { stdio: ['ignore', fs.openSync(path.join(out, name), 'w'), 'inherit'] });
      manifest.push({ file: name, schema, rows });
      console.log(`${name}: ${Object.values(rows).reduce((a, b) => a + b, 0)} rows in ${Object.keys(rows).length} tables`);
    }
    fs.writeFileSync(path.join(out, 'manifest.json'), JSON.stringify({ password: FIXTURE_PASSWORD, fixtures: manifest }, null, 1) + '\n');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
