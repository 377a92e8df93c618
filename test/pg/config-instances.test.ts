// Two packaged instances started at once on one PostgreSQL database with the same --config file:
// they end as one would (each group made once, its nesting once), and the file then plans no change.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { onPostgres } from '../helpers/pg';

t.test('the same file applied by two instances at once ends as one apply', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'gatehouse.yaml');
  const groups = Array.from({ length: 11 }, (_, i) => `  - name: team${i}\n${i < 10 ? `    groups: [team${i + 1}]\n` : ''}`).join('');
  fs.writeFileSync(file, `version: 1\ngroups:\n${groups}actions:\n  signup: {guest: true}\n`);
  t.equal((await pg.shell(['migrate'])).code, 0);
  const [a, b] = await Promise.all([pg.serve(['--config', file]), pg.serve(['--config', file])]);
  const created = [a, b].map((s) => Number(/"event":"config_applied".*?"created":(\d+)/.exec(s.output())?.[1]));
  t.same(
    created.sort((x, y) => x - y),
    [0, 11],
    'one instance made the eleven groups (ten nestings deep), the other found them made',
  );
  const list = JSON.parse((await pg.shell(['--json', 'group', 'list'])).stdout).groups as Array<{ name: string }>;
  t.equal(list.filter((g) => g.name.startsWith('team')).length, 11, 'each group once');
  const plan = await pg.shell(['config', 'plan', file]);
  t.equal(plan.code, 0, `nothing left to change: ${plan.stdout}${plan.stderr}`);
});
