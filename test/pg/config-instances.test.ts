// Two packaged instances started at once on one PostgreSQL database with the same --config file:
// they end as one would (each group made once, its nesting once; each client, SAML SP, app,
// provider, webhook and SCIM target once), and the file then plans no change.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import t from 'tap';
import { onPostgres } from '../helpers/pg';

t.test('the same file applied by two instances at once ends as one apply', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gatehouse.yaml');
  const groups = Array.from({ length: 11 }, (_, i) => `  - name: team${i}\n${i < 10 ? `    groups: [team${i + 1}]\n` : ''}`).join('');
  const rest = `oidc_clients:
  - client_id: grafana
    name: Grafana
    secret: {file: grafana-secret}
    redirect_uris: [https://grafana.example.com/login/generic_oauth]
saml_sps:
  - entity_id: https://wiki.example.com/saml
    acs: [{url: https://wiki.example.com/saml/acs}]
    allowed_groups: [team0]
forward_apps:
  - host: photos.example.com
    allowed_groups: [team3]
providers:
  - name: gitlab
    issuer: https://gitlab.example.com
    client_id: gatehouse
    client_secret: {file: gitlab-secret}
webhooks:
  - url: https://audit.example.com/gatehouse
    secret: {file: audit-secret}
scim_targets:
  - name: wiki
    url: https://wiki.example.com/scim/v2
    token: {file: wiki-token}
`;
  fs.writeFileSync(file, `version: 1\ngroups:\n${groups}actions:\n  signup: {guest: true}\n${rest}`);
  fs.writeFileSync(path.join(dir, 'grafana-secret'), 'grafana-secret-0123456789abcdefghijklmnopqrstuvwxyz');
  fs.writeFileSync(path.join(dir, 'gitlab-secret'), 'gitlab-secret');
  fs.writeFileSync(path.join(dir, 'audit-secret'), `whsec_${Buffer.alloc(32, 3).toString('base64')}`);
  fs.writeFileSync(path.join(dir, 'wiki-token'), 'wiki-token');
  t.equal((await pg.shell(['migrate'])).code, 0);
  const [a, b] = await Promise.all([pg.serve(['--config', file]), pg.serve(['--config', file])]);
  const created = [a, b].map((s) => Number(/"event":"config_applied".*?"created":(\d+)/.exec(s.output())?.[1]));
  t.same(
    created.sort((x, y) => x - y),
    [0, 17],
    'one instance made the eleven groups (ten nestings deep) and the six others, the other found them made',
  );
  const list = JSON.parse((await pg.shell(['--json', 'group', 'list'])).stdout).groups as Array<{ name: string }>;
  t.equal(list.filter((g) => g.name.startsWith('team')).length, 11, 'each group once');
  for (const [table, n] of [
    ['oidc_client', 1],
    ['saml_sp', 1],
    ['forward_app', 1],
    ['upstream_provider', 1],
    ['webhook', 1],
    ['scim_target', 1],
  ] as const) {
    const client = new Client({ connectionString: pg.db });
    await client.connect();
    const r = await client.query(`SELECT COUNT(*) AS n FROM ${table}`);
    await client.end();
    t.equal(Number(r.rows[0].n), n, `${table}: once`);
  }
  const plan = await pg.shell(['config', 'plan', file]);
  t.equal(plan.code, 0, `nothing left to change: ${plan.stdout}${plan.stderr}`);
});
