// Attack review, item 1 (high): a client's allowed-group gate, and the `groups` claim apps map to
// roles, compared group *names*, and any signed-in account can make a group or rename its own.
// Each variant below passed the gate before the fix.
import t from 'tap';
import { cli } from '../helpers/cli';
import { errorCode, PASSWORD, setSignup, withAdmin } from '../helpers/server';

const REDIRECT = 'http://localhost:3999/callback';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('mallory@example.com');
  const mallory = await s.signin('mallory@example.com');
  const me = (await s.call('GET', '/api/me', { token: mallory })).body;
  return { s, mallory, sub: me.data.id as string, dedicated: me.meta.groups.find((g: { name: string }) => g.name.startsWith('Home group'))!.id as string };
}

const makeGroup = (s: Awaited<ReturnType<typeof setUp>>['s'], token: string, name: string) =>
  s.call('POST', '/api/usergroup', { token, body: { data: { type: 'usergroup', attributes: { name } } } });

const addClient = async (dataDir: string, ...args: string[]) => {
  const r = await cli(dataDir, ['--json', 'client', 'add', '--name', 'Grafana', '--redirect-uri', REDIRECT, ...args]);
  return r;
};

t.test('look-alike group names cannot be made or renamed into while a managed group has the name', async (t) => {
  const { s, mallory, dedicated } = await setUp(t);
  t.equal((await cli(s.dataDir, ['group', 'create', 'grafana-users'])).code, 0);
  const variants: Array<[string, string]> = [
    ['same name', 'grafana-users'],
    ['other case', 'Grafana-Users'],
    ['zero-width space', 'grafana\u200b-users'],
    ['zero-width joiner at the end', 'grafana-users\u200d'],
    ['Cyrillic а and е', 'gr\u0430fana-us\u0435rs'],
    ['Greek ο and fullwidth letters', 'ｇrafana-users'],
    ['underscore for the dash', 'grafana_users'],
    ['accented a', 'grafána-users'],
  ];
  for (const [what, name] of variants) {
    // A hidden character is refused as such (the one rule for names), before any look-alike check.
    const [status, code] = /[\u200b\u200d]/.test(name) ? [400, 'invalid_input'] : [409, 'name_taken'];
    const r = await makeGroup(s, mallory, name);
    t.equal(r.status, status, `create: ${what}`);
    t.equal(errorCode(r), code, `create: ${what}`);
    const renamed = await s.call('PATCH', `/api/usergroup/${dedicated}`, {
      token: mallory,
      body: { data: { type: 'usergroup', id: dedicated, attributes: { name } }, meta: {} },
    });
    t.equal(renamed.status, status, `rename of the dedicated group: ${what}`);
  }
  const unchanged = await s.call('GET', `/api/usergroup/${dedicated}`, { token: mallory });
  t.match(unchanged.body.data.attributes.name, /^Home group of/, 'the dedicated group kept its name');
  t.equal((await makeGroup(s, mallory, 'grafana-fans')).status, 201, 'a different name is fine');
  t.equal((await cli(s.dataDir, ['group', 'create', 'Grafana_Users'])).code, 3, 'administrators get the same refusal (one name, one group)');
});

t.test('the gate compares ids of managed groups: a group made first by an account opens nothing', async (t) => {
  const { s, mallory, sub } = await setUp(t);
  // Mallory squats the name before the administrator makes the real group, and joins it.
  const squat = await makeGroup(s, mallory, 'grafana-users');
  t.equal(squat.status, 201, 'no managed group has the name yet');
  t.equal((await cli(s.dataDir, ['group', 'create', 'grafana-users'])).code, 0, 'the administrator still makes the real group');
  const client = await addClient(s.dataDir, '--allowed-group', 'grafana-users');
  t.equal(client.code, 0, client.err);
  const real = (await cli(s.dataDir, ['--json', 'client', 'show', client.json.client_id])).json;
  t.same(real.allowed_groups, ['grafana-users']);
  t.equal(real.allowed_group_ids.length, 1);
  t.not(real.allowed_group_ids[0], squat.body.data.id, 'the gate holds the managed group, not the squatter’s');

  t.equal((await s.core.oidc.clientPolicy(client.json.client_id, sub)).allowed, false, 'Mallory in her own "grafana-users" is refused');
  const claims = await s.core.oidc.claims(sub);
  t.notOk(claims!.groups.includes('grafana-users'), 'and her group is not in her groups claim');
  t.same(claims!.groups, ['users'], 'only managed groups are claimed');

  const byId = await addClient(s.dataDir, '--allowed-group', squat.body.data.id);
  t.equal(byId.code, 2, 'a group an ordinary account manages cannot be a gate');
  t.match(byId.err, /not an administrator/);

  t.equal((await cli(s.dataDir, ['group', 'add', 'grafana-users', 'mallory@example.com'])).code, 0, 'the shell resolves the name to the managed group');
  t.equal((await s.core.oidc.clientPolicy(client.json.client_id, sub)).allowed, true, 'a real member passes');
  t.ok((await s.core.oidc.claims(sub))!.groups.includes('grafana-users'));
});

t.test('a renamed group keeps its gate; a deleted one closes it', async (t) => {
  const { s, sub } = await setUp(t);
  await cli(s.dataDir, ['group', 'create', 'editors']);
  await cli(s.dataDir, ['group', 'add', 'editors', 'mallory@example.com']);
  const client = await addClient(s.dataDir, '--allowed-group', 'editors');
  const groups = (await s.call('GET', '/api/usergroup?filter=editors', { token: s.adminToken })).body.data;
  const id = groups[0].id;
  const renamed = await s.call('PATCH', `/api/usergroup/${id}`, {
    token: s.adminToken,
    body: { data: { type: 'usergroup', id, attributes: { name: 'writers' } }, meta: {} },
  });
  t.equal(renamed.status, 200);
  t.equal((await s.core.oidc.clientPolicy(client.json.client_id, sub)).allowed, true, 'the gate follows the id through a rename');
  t.equal((await cli(s.dataDir, ['group', 'delete', 'writers'])).code, 0);
  t.equal((await s.core.oidc.clientPolicy(client.json.client_id, sub)).allowed, false, 'a deleted group admits nobody');
  const shown = await cli(s.dataDir, ['--json', 'client', 'show', client.json.client_id]);
  // Once, under CI load, this printed no JSON; say why if it happens again.
  t.equal(shown.code, 0, `client show: ${shown.err}`);
  t.match(shown.json?.allowed_groups, [/deleted group/]);
  void PASSWORD;
});
