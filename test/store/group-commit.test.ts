// Group commit (store/group-commit.ts): writes arriving together share one transaction, each is
// answered only once committed, and one failing write does not take the others of its batch down.
import t, { type Test } from 'tap';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { loadConfig } from '../../src/config';
import { GroupCommit } from '../../src/store/group-commit';
import { open, storeError, type Handle } from '../../src/store/handle';
import { findPayload, upsertPayload, consumePayload, destroyPayload } from '../../src/store/oidc';
import { storeFlags, tempDir, TEST_STORE } from '../helpers/server';
import { inspectionDb, openTestStore } from '../helpers/db';

async function setup(t: Test) {
  const config = loadConfig({ ...(await storeFlags(t, tempDir(t))) }, {});
  const store = await openTestStore(t, config);
  return { store, db: inspectionDb(t, config), h: open(store.root) };
}

/** A batched insert as the provider's writes make them: hand-written SQL through the handle's run. */
const insert = (b: Handle, id: string) =>
  b.run('INSERT INTO oidc_payload (model, id, payload) VALUES (?, ?, ?)', ['AccessToken', id, JSON.stringify({ jti: id })]);

const row = (id: string) => ({
  model: 'AccessToken',
  id,
  payload: JSON.stringify({ jti: id }),
  grant_id: null,
  uid: null,
  client_id: null,
  account: null,
  expires_at: null,
  user_code: null,
});

t.test('writes made together share transactions, and each is stored when it resolves', async (t) => {
  const { store, db, h } = await setup(t);
  const transactions = new Set<Handle>();
  // 200 writes started in one turn: they run in far fewer transactions than writes.
  await Promise.all(Array.from({ length: 200 }, (_, i) => h.batch((b) => (transactions.add(b), insert(b, `t${i}`)))));
  t.equal(Number((await db('oidc_payload').count({ n: '*' }).first())?.n), 200, 'every write stored');
  t.ok(transactions.size <= 2, `200 writes in ${transactions.size} transaction(s)`);
  t.ok(
    [...transactions].every((b) => b.inTransaction),
    'each in a transaction of its batch, none alone',
  );
  // Through the provider's store functions: upsert, consume, destroy, each visible once resolved.
  await Promise.all([upsertPayload(store.root, row('a')), upsertPayload(store.root, row('b')), upsertPayload(store.root, row('c'))]);
  await Promise.all([consumePayload(store.root, 'AccessToken', 'a'), destroyPayload(store.root, 'AccessToken', 'b')]);
  t.ok((await findPayload(store.root, 'AccessToken', { id: 'a' }))?.consumed_at, 'consumed');
  t.equal(await findPayload(store.root, 'AccessToken', { id: 'b' }), undefined, 'destroyed');
  t.ok(await findPayload(store.root, 'AccessToken', { id: 'c' }), 'upserted');
});

t.test('a failing write in a batch fails alone; the others are stored', async (t) => {
  const { db, h } = await setup(t);
  await db('oidc_payload').insert(row('taken'));
  const results = await Promise.allSettled([
    h.batch((b) => insert(b, 'one')),
    h.batch((b) => insert(b, 'taken')), // primary key (model, id) already there
    h.batch((b) => insert(b, 'two')),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  const ids = (await db('oidc_payload').orderBy('id').select('id')).map((r: { id: string }) => r.id);
  t.same(ids, ['one', 'taken', 'two'], 'nothing half-written, nothing lost');
});

t.test('the same write of several requests as one statement: each row its own values; one bad row fails alone', async (t) => {
  const { store, db } = await setup(t);
  // Three upserts and two consumes arriving together (one batch: SQLite makes each kind one statement).
  await Promise.all(['a', 'b', 'c'].map((id) => upsertPayload(store.root, { ...row(id), payload: JSON.stringify({ jti: id, n: 1 }) })));
  await Promise.all([consumePayload(store.root, 'AccessToken', 'a'), consumePayload(store.root, 'AccessToken', 'b')]);
  const rows = await db('oidc_payload').orderBy('id').select('id', 'payload', 'consumed_at');
  t.same(
    rows.map((r: { id: string; payload: string }) => [r.id, JSON.parse(r.payload).jti]),
    [
      ['a', 'a'],
      ['b', 'b'],
      ['c', 'c'],
    ],
    'each row its own payload',
  );
  t.ok(rows[0].consumed_at && rows[1].consumed_at, 'both consumed');
  t.equal(rows[2].consumed_at, null, 'the third untouched');
  // An upsert again (the same ids): updated in place.
  await Promise.all(['a', 'c'].map((id) => upsertPayload(store.root, { ...row(id), payload: JSON.stringify({ jti: id, n: 2 }) })));
  t.same(
    (await db('oidc_payload').orderBy('id').select('payload')).map((r: { payload: string }) => JSON.parse(r.payload).n),
    [2, 1, 2],
  );
  // A row the table refuses (payload is NOT NULL) among good ones: it fails alone.
  const results = await Promise.allSettled([
    upsertPayload(store.root, row('d')),
    upsertPayload(store.root, { ...row('bad'), payload: null as unknown as string }),
    upsertPayload(store.root, row('e')),
  ]);
  t.same(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.same(
    (await db('oidc_payload').whereIn('id', ['d', 'bad', 'e']).orderBy('id').select('id')).map((r: { id: string }) => r.id),
    ['d', 'e'],
    'nothing half-written, nothing lost',
  );
});

t.test('inside a transaction a batched write is part of it (and rolls back with it)', async (t) => {
  const { store, db } = await setup(t);
  await t.rejects(
    store.transaction(async (tx) => {
      await upsertPayload(tx, row('inside'));
      throw new Error('abort');
    }),
    /abort/,
  );
  t.equal(Number((await db('oidc_payload').count({ n: '*' }).first())?.n), 0);
});

// Handle.batch's order rule: writes handed over together run in no set order, so a job whose
// writes depend on one another awaits each in turn, and then they keep their order in its batch,
// whatever the other jobs of that batch write; a conditional write (claim) answers by its rows.
t.test('a job that awaits its writes in turn keeps their order inside a batch; a claim answers once', async (t) => {
  const { db, h } = await setup(t);
  await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      h.batch(async (b) => {
        await insert(b, `o${i}`);
        // Depends on the insert: it must see the row.
        await b.run("UPDATE oidc_payload SET payload = ? WHERE model = 'AccessToken' AND id = ?", [JSON.stringify({ jti: `o${i}`, second: true }), `o${i}`]);
        await b.run("DELETE FROM oidc_payload WHERE model = 'AccessToken' AND id = ?", [`o${i}`]);
        await insert(b, `o${i}`);
      }),
    ),
  );
  const rows = await db('oidc_payload').where('id', 'like', 'o%');
  t.equal(rows.length, 50, 'each job ended with its row inserted again');
  t.ok(
    rows.every((r: { payload: string }) => !JSON.parse(r.payload).second),
    'after its update and its delete: the order of each job held',
  );
  // Of claims on one row made together, one changes it.
  await h.batch((b) => insert(b, 'claimed'));
  const claims = await Promise.all(
    Array.from({ length: 8 }, () =>
      h.batch(
        async (b) =>
          (await b.claim("UPDATE oidc_payload SET consumed_at = 1 WHERE model = 'AccessToken' AND id = 'claimed' AND consumed_at IS NULL RETURNING id", []))
            .length,
      ),
    ),
  );
  t.same(claims.sort(), [0, 0, 0, 0, 0, 0, 0, 1], 'one claim changed the row');
});

t.test('consumes made together are one statement: of those of one row the first wins, each other row once', async (t) => {
  const { store, db } = await setup(t);
  const ids = ['r1', 'r2', 'r3', 'r4'];
  for (const id of ids) await db('oidc_payload').insert({ ...row(id), model: 'RefreshToken' });
  await db('oidc_payload').where({ model: 'RefreshToken', id: 'r4' }).update({ consumed_at: 5 });
  // r1 four times, r2 twice, r3 once, r4 (used already) twice, and one that does not exist: all in one turn.
  const asked = ['r1', 'r2', 'r1', 'r3', 'r4', 'r1', 'r2', 'r4', 'r1', 'gone'];
  const won = await Promise.all(asked.map((id) => consumePayload(store.root, 'RefreshToken', id)));
  const wins = (id: string) => won.filter((w, i) => w && asked[i] === id).length;
  t.same(ids.map(wins), [1, 1, 1, 0], 'each unused row won once, the used one never');
  t.equal(wins('gone'), 0, 'a missing row is never won');
  const consumed = await db('oidc_payload').where({ model: 'RefreshToken' }).whereNotNull('consumed_at').orderBy('id').pluck('id');
  t.same(consumed, ids, 'every row consumed');
  t.equal(Number((await db('oidc_payload').where({ model: 'RefreshToken', id: 'r4' }).first())?.consumed_at), 5, 'the used one kept its time');
});

t.test('a consume that loses ends the grant it names in the same transaction, batched or alone', async (t) => {
  const { store, db } = await setup(t);
  const grant = async (g: string) => {
    await db('oidc_payload').insert({ ...row(g), model: 'Grant' });
    await db('oidc_payload').insert({ ...row(`${g}-rt`), model: 'RefreshToken', grant_id: g });
    await db('oidc_payload').insert({ ...row(`${g}-at`), grant_id: g });
    await db('oidc_payload').insert({ ...row(`${g}-ia`), model: 'Interaction', grant_id: g });
  };
  const left = async (g: string) => (await db('oidc_payload').where({ grant_id: g }).orWhere({ model: 'Grant', id: g }).orderBy('id').pluck('id')) as string[];
  // Together (one batch): one wins; the loser's statement ended the grant before either answered.
  await grant('g1');
  const won = await Promise.all([1, 2, 3].map(() => consumePayload(store.root, 'RefreshToken', 'g1-rt', 'g1')));
  t.same(won.filter(Boolean).length, 1, 'one of three wins');
  t.same(await left('g1'), ['g1-ia'], 'the grant and its tokens are gone; its sign-in in progress stays');
  // Alone (a batch of one): used once, then presented again.
  await grant('g2');
  t.equal(await consumePayload(store.root, 'RefreshToken', 'g2-rt', 'g2'), true, 'the first use wins');
  t.same(await left('g2'), ['g2', 'g2-at', 'g2-ia', 'g2-rt'], 'a win ends nothing');
  t.equal(await consumePayload(store.root, 'RefreshToken', 'g2-rt', 'g2'), false, 'the second loses');
  t.same(await left('g2'), ['g2-ia'], 'and ended the grant');
  // Without a grant named, a loss changes nothing else.
  await grant('g3');
  await consumePayload(store.root, 'RefreshToken', 'g3-rt');
  t.equal(await consumePayload(store.root, 'RefreshToken', 'g3-rt'), false);
  t.same(await left('g3'), ['g3', 'g3-at', 'g3-ia', 'g3-rt'], 'nothing ended');
});

t.test('a batch that ends in doubt (its COMMIT unanswered, the writer gone) runs no write twice', async (t) => {
  // Rerunning each write alone is only for a batch rolled back because one of its writes failed:
  // after a lost COMMIT the writes may be stored, and a write applied twice could count twice.
  const ran: string[] = [];
  const alone: string[] = [];
  const root = { run: async () => void alone.push('root') } as unknown as Handle;
  const writes = new GroupCommit(root, async (fn) => {
    await fn(root);
    throw Object.assign(new Error("the store's writer thread exited (1); try again"), { code: 'unavailable' });
  });
  const results = await Promise.allSettled(['a', 'b', 'c'].map((id) => writes.run(async () => void ran.push(id))));
  t.same(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'rejected'],
    'every write of the batch is told',
  );
  t.same(ran.sort(), ['a', 'b', 'c'], 'each ran once, in the batch');
  t.same(alone, [], 'none again alone');
});

t.test(
  'writes behind a lock another process holds: each is tried once and told, none waits again alone',
  { skip: TEST_STORE === 'postgres' && 'the SQLite store' },
  async (t) => {
    const config = loadConfig({ dataDir: tempDir(t), busyTimeout: '600' }, {});
    const store = await openTestStore(t, config);
    const h = open(store.root);
    const holder = spawn(process.execPath, [path.join(__dirname, '..', 'helpers', 'lock-holder.js'), path.join(config.dataDir, 'gatehouse.sqlite'), 'stdin'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.teardown(() => void holder.stdin.end());
    await new Promise((r) => holder.stdout.once('data', r));
    let tries = 0;
    const started = Date.now();
    const wave = () => Array.from({ length: 4 }, (_, i) => h.batch((b) => (tries++, insert(b, `w${tries}-${i}`))));
    const first = wave();
    await new Promise((r) => setTimeout(r, 300));
    const second = wave();
    const results = await Promise.allSettled([...first, ...second]);
    t.ok(
      results.every((r) => r.status === 'rejected' && (storeError(r.reason) as { code?: string }).code === 'unavailable'),
      `all eight told the store is busy (${Date.now() - started} ms for two waves with a 600 ms busy timeout)`,
    );
    t.equal(tries, 0, 'none ran: a batch whose BEGIN found the lock held is not run again write by write');
    holder.stdin.end();
    await new Promise((r) => holder.once('exit', r));
    await h.batch((b) => insert(b, 'after'));
    t.pass('the next write goes in once the lock is gone');
  },
);
