// POSIX numbers over one PostgreSQL database (contract section 25): accounts made on two packaged
// instances at once (and groups made from the shell meanwhile) each get a number of their own from
// the one counter, each instance's directory serves the same number for a person, and
// --posix-id-base refuses a base below 1000 or one that would meet numbers already given.
import knexFactory from 'knex';
import t from 'tap';
import { freePort } from '../helpers/browser';
import { ldapTool, ldif } from '../helpers/ldap';
import { onPostgres } from '../helpers/pg';

const PW = 'posix instance password 1';
const BASE = 'dc=example,dc=test';

async function post(url: string, path: string, body: unknown, token?: string) {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & Array<{ ResponseType: string; Attributes: { key: string; value: string } }> };
}

t.test('accounts made on two instances at once: one number each, the same on both', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.test', '--password-env', 'PW'], { PW })).code, 0);
  const ports = [await freePort(), await freePort()];
  const servers = await Promise.all(ports.map((p) => pg.serve(['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--ldap-port', String(p)])));
  const signin = await post(servers[0].url, '/action/user_account/signin', { attributes: { email: 'admin@example.test', password: PW } });
  const token = signin.body.find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === 'token')!.Attributes.value;
  const account = (i: number) => ({
    data: { type: 'user_account', attributes: { email: `p${i}@example.test`, name: `P ${i}`, password: PW, passwordConfirm: PW } },
  });
  // 16 accounts, alternately on each instance, all at once; 4 groups from the shell meanwhile.
  const made = await Promise.all([
    ...Array.from({ length: 16 }, (_, i) => post(servers[i % 2].url, '/api/user_account', account(i), token)),
    ...Array.from({ length: 4 }, (_, i) => pg.shell(['group', 'create', `g${i}`])),
  ]);
  t.same(
    made.slice(0, 16).map((r) => (r as { status: number }).status),
    Array(16).fill(201),
    'every account made',
  );

  const db = knexFactory({ client: 'pg', connection: pg.db });
  t.teardown(() => db.destroy());
  const people = await db('user_account').select('username', 'posix_id');
  const groups = await db('usergroup').whereNotNull('posix_id').select('posix_id');
  const numbers = [...people.map((p) => Number(p.posix_id)), ...groups.map((g) => Number(g.posix_id))];
  t.equal(people.filter((p) => p.posix_id === null).length, 0, 'every account has a number');
  t.equal(new Set(numbers).size, numbers.length, 'no number given twice');
  const counter = await db('posix_counter').first();
  t.same(
    [...numbers].sort((a, b) => a - b),
    Array.from({ length: numbers.length }, (_, i) => 10000 + i),
    'one run from 10000, none lost',
  );
  t.equal(Number(counter.next_id), 10000 + numbers.length);

  // Each instance's directory: the same number for a person.
  const admin = ['-x', '-D', `uid=admin,ou=people,${BASE}`, '-w', PW, '-b', `ou=people,${BASE}`, '(objectClass=posixAccount)', 'uidNumber'];
  const served = await Promise.all(
    ports.map(async (p) => {
      const r = await ldapTool('ldapsearch', ['-H', `ldap://127.0.0.1:${p}`, ...admin]);
      return [...ldif(r.out)].map(([dn, a]) => `${dn} ${a.get('uidNumber')}`).sort();
    }),
  );
  // admin is a host's own account's name (root, admin, ubuntu…): a person without the POSIX side.
  t.equal(served[0].length, people.filter((p) => p.username !== 'admin').length);
  t.notOk(
    served[0].some((l) => l.startsWith('uid=admin,')),
    'admin: no uidNumber',
  );
  t.same(served[0], served[1], 'both instances serve the same numbers');

  // --posix-id-base: below 1000, and one that meets numbers given, refuse to start; one past them moves the counter.
  await Promise.all(servers.map((s) => s.stop()));
  const low = await pg.shell(['serve', '--port', '0', '--posix-id-base', '999']);
  t.not(low.code, 0);
  t.match(low.stderr, /posix-id-base must be between 1000 and/);
  const overlap = await pg.shell(['serve', '--port', '0', '--posix-id-base', '10005']);
  t.not(overlap.code, 0);
  t.match(
    overlap.stderr,
    new RegExp(
      `--posix-id-base 10005 would meet the POSIX numbers already given \\(10000 to ${10000 + numbers.length - 1}, from the base 10000\\): keep 10000, or give ${10000 + numbers.length} or more`,
    ),
  );
  t.equal(Number((await db('posix_counter').first()).next_id), 10000 + numbers.length, 'nothing changed');
  const moved = await pg.serve(['--bcrypt-cost', '4', '--posix-id-base', '50000']);
  t.equal((await pg.shell(['user', 'create', '--email', 'late@example.test', '--password-env', 'PW'], { PW })).code, 0);
  t.equal(Number((await db('user_account').where({ username: 'late' }).first()).posix_id), 50000, 'the next number from the new base');
  await moved.stop();
  const back = await pg.shell(['serve', '--port', '0', '--posix-id-base', '10000']);
  t.match(back.stderr, /would meet the POSIX numbers already given/, 'going back below is refused too');
});

t.test("across 65534 on two instances at once: nobody's number and 65535 never given; a base of either refused", async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.test', '--password-env', 'PW'], { PW })).code, 0);
  for (const base of ['65534', '65535']) {
    const r = await pg.shell(['serve', '--port', '0', '--posix-id-base', base]);
    t.not(r.code, 0);
    t.match(r.stderr, new RegExp(`--posix-id-base may not be ${base}: 65534 is nobody's`));
  }
  const servers = await Promise.all([0, 1].map(() => pg.serve(['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--posix-id-base', '65530'])));
  const signin = await post(servers[0].url, '/action/user_account/signin', { attributes: { email: 'admin@example.test', password: PW } });
  const token = signin.body.find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === 'token')!.Attributes.value;
  const account = (i: number) => ({
    data: { type: 'user_account', attributes: { email: `q${i}@example.test`, name: `Q ${i}`, password: PW, passwordConfirm: PW } },
  });
  const made = await Promise.all(Array.from({ length: 8 }, (_, i) => post(servers[i % 2].url, '/api/user_account', account(i), token)));
  t.same(
    made.map((r) => r.status),
    Array(8).fill(201),
  );
  const db = knexFactory({ client: 'pg', connection: pg.db });
  t.teardown(() => db.destroy());
  const numbers = (await db('user_account').whereLike('email', 'q%').pluck('posix_id')).map(Number).sort((a, b) => a - b);
  t.same(numbers, [65530, 65531, 65532, 65533, 65536, 65537, 65538, 65539], 'one run from 65530, over 65534 and 65535');
  await Promise.all(servers.map((s) => s.stop()));
});
