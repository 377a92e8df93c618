// Directory sources at once, on one store (SQLite: two instances of one data folder; PostgreSQL:
// `node scripts/test-pg.mjs` runs this file with two instances over one database): two syncs of
// one source leave one account per person and one group per group; of two instances whose timers
// find a sync due at the same moment, one runs it; a person's first sign-in, four at once, is
// audited once; a sync's departures are counted against what another sync, waiting ahead of it,
// has just written.
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli';
import { startTestServer, tempDir, type TestServer } from '../helpers/server';
import { ADMIN_DN, ADMIN_PASSWORD, groupDn, groupLdif, personDn, personLdif, startSlapd, SUFFIX } from '../helpers/slapd';

/**
 * A TCP relay in front of the directory that can hold its answers: a sync that has found its
 * source and connected waits there, at a moment the test chooses.
 */
async function relay(t: Test, target: string) {
  const { hostname, port } = new URL(target);
  let held = false;
  const waiting: Array<() => void> = [];
  let connections = 0;
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(Number(port), hostname);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (!held) return void client.write(d);
      upstream.pause();
      waiting.push(() => (client.write(d), upstream.resume()));
    });
    const end = () => (client.destroy(), upstream.destroy());
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return {
    url: `ldap://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold: () => void (held = true),
    release: () => {
      held = false;
      for (const go of waiting.splice(0)) go();
    },
    connected: async (n: number) => {
      for (let i = 0; i < 200 && connections < n; i++) await new Promise((r) => setTimeout(r, 25));
      return connections >= n;
    },
  };
}

const PEOPLE = ['alice', 'bob', 'carol', 'dan', 'erin', 'frank'];

async function directory(t: Test) {
  const slapd = await startSlapd(t);
  await slapd.add(
    PEOPLE.map((u) => personLdif(u, { cn: `${u} person`, password: `${u}-directory-pw` })).join('') +
      groupLdif('engineers', [personDn('alice'), personDn('bob'), personDn('carol')]) +
      groupLdif('staff', [personDn('dan'), groupDn('engineers')]) +
      groupLdif('sales', [personDn('erin'), personDn('frank')]),
  );
  return slapd;
}

/** Two instances over one store, and a source added from the shell. */
async function twoInstances(t: Test, extra: string[] = []) {
  const slapd = await directory(t);
  const dir = tempDir(t);
  const one = await startTestServer(t, {}, dir);
  const two = await startTestServer(t, {}, dir);
  const added = await cli(
    dir,
    [
      '--json',
      'source',
      'add',
      'ldap',
      '--name',
      'corp',
      '--url',
      slapd.url,
      '--bind-dn',
      ADMIN_DN,
      '--bind-password-env',
      'BINDPW',
      '--base-dn',
      SUFFIX,
      ...extra,
    ],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);
  return { slapd, dir, one, two };
}

const events = async (s: TestServer, name: string) => {
  await s.core.settle();
  const list = (await cli(s.dataDir, ['--json', 'audit', '--limit', '1000'])).json.events as Array<{ event: string }>;
  return list.filter((e) => e.event === name).length;
};

/** One account per person, one group per group, each tied to one entry, no membership twice. */
async function onceEach(t: Test, s: TestServer, morePeople: string[] = [], moreGroups: string[] = []) {
  for (const u of [...PEOPLE, ...morePeople]) {
    const n = await s
      .db('user_account')
      .where({ email_key: `${u}@example.org` })
      .count({ n: '*' })
      .first();
    t.equal(Number(n!.n), 1, `one account for ${u}`);
  }
  for (const g of ['engineers', 'staff', 'sales', ...moreGroups]) {
    const n = await s.db('usergroup').where({ name: g }).count({ n: '*' }).first();
    t.equal(Number(n!.n), 1, `one group ${g}`);
  }
  const entries = (await s.db('source_entry').select('kind').count({ n: '*' }).groupBy('kind')) as Array<{ kind: string; n: number | string }>;
  t.same(
    Object.fromEntries(entries.map((e) => [e.kind, Number(e.n)])),
    { group: 3 + moreGroups.length, person: PEOPLE.length + morePeople.length },
    'one entry per person and per group',
  );
  const twice = await s
    .db('membership')
    .select('user_account_id', 'usergroup_id')
    .count({ n: '*' })
    .groupBy('user_account_id', 'usergroup_id')
    .having(s.db.raw('count(*) > 1'));
  t.same(twice, [], 'no membership twice');
  const nestings = await s.db('usergroup_nesting').count({ n: '*' }).first();
  t.equal(Number(nestings!.n), 1, 'engineers inside staff, once');
  const engineers = await s.db('usergroup').where({ name: 'engineers' }).first();
  const members = await s.db('membership').where({ usergroup_id: engineers.id }).count({ n: '*' }).first();
  t.equal(Number(members!.n), 3, 'engineers: alice, bob, carol');
}

const clean = (t: Test, r: { code: number; err: string; json: any }, what: string) => {
  if (r.code === 0) return t.pass(`${what}: ok`);
  t.notMatch(r.err, /"internal"|unexpected error/, `${what}: a clean error, if any (${r.err.trim()})`);
};

t.test('two `source sync` of one source at once: one account per person, one group per group', async (t) => {
  const { slapd, dir, one, two } = await twoInstances(t);
  const [a, b] = await Promise.all([cli(dir, ['--json', 'source', 'sync', 'corp']), cli(dir, ['--json', 'source', 'sync', 'corp'])]);
  clean(t, a, 'the first');
  clean(t, b, 'the second');
  t.ok(a.code === 0 || b.code === 0, 'at least one ran');
  const created = [a, b].filter((r) => r.code === 0).reduce((n, r) => n + r.json.people.created, 0);
  t.equal(created, PEOPLE.length, 'each person made once, by one of them');
  await onceEach(t, one);
  t.equal(await events(one, 'account_imported'), PEOPLE.length, 'account_imported once per person');
  t.equal(await events(one, 'group_created'), 3, 'group_created once per group');

  // And on the two instances' own cores, four at once, after a change in the directory.
  await slapd.add(personLdif('gina', { cn: 'Gina' }) + groupLdif('ops', [personDn('gina'), personDn('alice')]));
  const syncs = await Promise.allSettled([
    one.core.sources.sync(one.core.shell, 'corp'),
    two.core.sources.sync(two.core.shell, 'corp'),
    one.core.sources.sync(one.core.shell, 'corp'),
    two.core.sources.sync(two.core.shell, 'corp'),
  ]);
  for (const r of syncs) t.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : 'a sync on an instance');
  await onceEach(t, one, ['gina'], ['ops']);
  t.equal(await events(one, 'account_imported'), PEOPLE.length + 1, 'gina imported once, nobody again');
  t.equal(await events(one, 'group_created'), 4, 'ops created once');
  const ops = await one.db('usergroup').where({ name: 'ops' }).first();
  t.equal(Number((await one.db('membership').where({ usergroup_id: ops.id }).count({ n: '*' }).first())!.n), 2, 'ops: gina and alice, once each');
});

t.test('two instances find a sync due at once: exactly one runs it', async (t) => {
  const { one, two } = await twoInstances(t, ['--every', '1m']);
  const shown = await cli(one.dataDir, ['--json', 'source', 'show', 'corp']);
  t.equal(shown.json.every, '1m');
  t.ok(shown.json.next_sync_at !== null, 'the first sync is due at once');

  await Promise.all([one.core.sources.syncDue(), two.core.sources.syncDue()]);
  t.equal(await events(one, 'source_synced'), 1, 'one source_synced: one instance ran it');
  await onceEach(t, one);
  const after = await cli(one.dataDir, ['--json', 'source', 'show', 'corp']);
  t.equal(after.json.last_status, 'ok');
  t.ok(Date.parse(after.json.next_sync_at) > Date.now() + 30_000, 'the next one a period away');

  // Not due: neither runs it.
  await Promise.all([one.core.sources.syncDue(), two.core.sources.syncDue()]);
  t.equal(await events(one, 'source_synced'), 1, 'nothing due, nothing run');

  // Due again, several times, each time both at once (four calls): one sync per time it falls due.
  for (let round = 2; round <= 5; round++) {
    await one
      .db('directory_source')
      .where({ name: 'corp' })
      .update({ next_sync_at: Date.now() - 1000 });
    await Promise.all([one.core.sources.syncDue(), two.core.sources.syncDue(), one.core.sources.syncDue(), two.core.sources.syncDue()]);
    t.equal(await events(one, 'source_synced'), round, `round ${round}: exactly one more sync`);
  }
  await onceEach(t, one);
});

t.test("a person's first sign-in, four at once over two instances: imported_signin once", async (t) => {
  const { dir, one, two } = await twoInstances(t);
  const synced = await cli(dir, ['--json', 'source', 'sync', 'corp']);
  t.equal(synced.code, 0, synced.err);
  const signin = (s: TestServer) => s.action('user_account', 'signin', { email: 'alice@example.org', password: 'alice-directory-pw' });
  const replies = await Promise.all([signin(one), signin(two), signin(one), signin(two)]);
  t.same(
    replies.map((r) => r.status),
    [200, 200, 200, 200],
    'each one signs in',
  );
  await two.core.settle();
  t.equal(await events(one, 'imported_signin'), 1, 'the first sign-in audited once');
  t.equal(await events(one, 'signin_ok'), 4);
  const entry = await one
    .db('source_entry')
    .join('user_account', 'user_account.id', 'source_entry.account_id')
    .where({ email_key: 'alice@example.org' })
    .first();
  t.ok(entry.first_signin_at, 'its first sign-in is marked');

  // Another person, first sign-in four times at once on one instance.
  const bob = await Promise.all([1, 2, 3, 4].map(() => one.action('user_account', 'signin', { email: 'bob@example.org', password: 'bob-directory-pw' })));
  t.same(
    bob.map((r) => r.status),
    [200, 200, 200, 200],
  );
  t.equal(await events(one, 'imported_signin'), 2, "bob's once too");
});

t.test('a source removed while its sync reads the directory: nothing half-written, and the sync says so', async (t) => {
  const slapd = await directory(t);
  const dir = tempDir(t);
  const one = await startTestServer(t, {}, dir);
  const r = await relay(t, slapd.url);
  const added = await cli(
    dir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', r.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);
  r.hold();
  const syncing = cli(dir, ['--json', 'source', 'sync', 'corp']);
  t.ok(await r.connected(2), 'the sync found its source and is waiting on the directory');
  const removed = await cli(dir, ['source', 'remove', 'corp']);
  t.equal(removed.code, 0, removed.err);
  r.release();
  const synced = await syncing;
  const accounts = await one.db('user_account').pluck('email');
  const orphans = await one
    .db('user_account')
    .leftJoin('source_entry', 'source_entry.account_id', 'user_account.id')
    .whereNull('source_entry.id')
    .where({ password: '' })
    .pluck('email');
  t.same(orphans, [], 'no account left with neither a password nor a source');
  t.same(accounts, [], `the removed source brings nobody (${accounts.length} accounts written)`);
  t.same(await one.db('usergroup').whereIn('name', ['engineers', 'staff', 'sales']).pluck('name'), [], 'nor its groups');
  t.not(synced.code, 0, `the sync says its source is gone rather than succeeding: ${synced.code} ${JSON.stringify(synced.json?.people ?? synced.err)}`);
  clean(t, synced, 'the sync');
});

/**
 * Holds the store's accounts lock (every sync's transaction takes it) until `release()`: on SQLite
 * another process's exclusive transaction (test/helpers/lock-holder.js), on PostgreSQL a
 * transaction of the test's own holding the lock's row.
 */
async function holdAccountsLock(s: TestServer): Promise<{ release(): Promise<void> }> {
  if (s.core.dialect === 'postgres') {
    const trx = await s.db.transaction();
    await trx('write_lock').where({ name: 'accounts' }).increment('counter', 1);
    return { release: () => trx.commit().then(() => undefined) };
  }
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'lock-holder.js'), path.join(s.dataDir, 'gatehouse.sqlite'), 'stdin'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    void exited.then(() => reject(new Error('the lock holder exited without taking the lock')));
  });
  return { release: () => (child.stdin!.end(), exited) };
}

/**
 * How many of the core's transactions wait behind the held lock: on SQLite the one writer
 * connection is taken (by the first) and the others queue for it; on PostgreSQL each waits on the
 * lock's row.
 */
async function waiting(s: TestServer): Promise<number> {
  if (s.core.dialect === 'postgres') {
    const rows = await s.db.raw("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
    return Number(rows.rows[0].n);
  }
  const pool = (await s.core.metrics({ token: null, client: '127.0.0.1', userAgent: null })).pool!;
  return pool.used + pool.pending;
}
const until = async (what: () => Promise<boolean>) => {
  for (let i = 0; i < 400 && !(await what()); i++) await new Promise((r) => setTimeout(r, 25));
  return what();
};

t.test('issue 73: a sync checks its departures against the entries its transaction sees, not ones read before another sync wrote', async (t) => {
  // Sync A reads the directory of six people; then the directory loses five, and sync B reads it.
  // Both wait on the accounts lock, A first; A writes the six. B's answer would now disable five of
  // six: refused. (Before, B counted its departures against the entries it read before its
  // transaction, when A had written nobody yet, and disabled five people without being told to.)
  const slapd = await directory(t);
  const dir = tempDir(t);
  const s = await startTestServer(t, { publicMetrics: true }, dir);
  const added = await cli(
    dir,
    ['source', 'add', 'ldap', '--name', 'corp', '--url', slapd.url, '--bind-dn', ADMIN_DN, '--bind-password-env', 'BINDPW', '--base-dn', SUFFIX],
    { env: { BINDPW: ADMIN_PASSWORD } },
  );
  t.equal(added.code, 0, added.err);

  const lock = await holdAccountsLock(s);
  const a = s.core.sources.sync(s.core.shell, 'corp').then(
    (r) => ({ ok: r }),
    (err: unknown) => ({ err }),
  );
  t.ok(await until(async () => (await waiting(s)) >= 1), 'sync A has read the directory and waits for the lock');
  for (const u of PEOPLE.filter((u) => u !== 'alice')) await slapd.remove(personDn(u));
  const b = s.core.sources.sync(s.core.shell, 'corp').then(
    (r) => ({ ok: r }),
    (err: unknown) => ({ err }),
  );
  t.ok(await until(async () => (await waiting(s)) >= 2), 'sync B has read the directory (one person left) and waits behind A');
  await lock.release();

  const [first, second] = await Promise.all([a, b]);
  // Which of the two waiting syncs gets the lock first is the store's choice (PostgreSQL may let
  // B in first). A first: A brings six, and B, which would disable five, is refused. B first: B
  // brings the one left and A the other five, and neither has anyone to disable.
  if ('ok' in first && first.ok.people.created === PEOPLE.length) {
    const refused = 'err' in second ? (second.err as { code?: string; message?: string }) : undefined;
    t.equal(refused?.code, 'conflict', `sync B is refused as a mass departure: ${JSON.stringify('ok' in second ? second.ok.people : refused?.message)}`);
  } else {
    t.ok('ok' in second && second.ok.people.created === 1, `B went first and brought the one person left: ${JSON.stringify(second)}`);
    t.ok('ok' in first && first.ok.people.created === PEOPLE.length - 1, `then A brought the other five: ${JSON.stringify(first)}`);
  }
  const disabled = await s.db('user_account').where({ disabled: true }).pluck('email');
  t.same(disabled, [], 'nobody disabled without the operator saying so');
});
