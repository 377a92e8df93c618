// A read that rides along in the token check's statement (store/request-facts.ts Ride: rows as one
// JSON value; PostgreSQL's GET /api/<type>/<id>) answers exactly what the same read made on its
// own answers: every column decoded to the same value and type, the groups a row is shared with,
// a missing row. Run on both dialects (the JSON is built differently); the facts come back too.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { loadConfig } from '../../src/config';
import { MAX_PERMISSION } from '../../src/permission/bits';
import { guardedRide, readGuarded } from '../../src/store/guarded-rows';
import { readRequestFacts, readRequestFactsWith } from '../../src/store/request-facts';
import { openTestStore, inspectionDb } from '../helpers/db';
import { storeFlags, tempDir } from '../helpers/server';

t.test('a row read along with the facts equals the same read on its own', async (t) => {
  const config = loadConfig(await storeFlags(t, tempDir(t)), {});
  const store = await openTestStore(t, config);
  const db = inspectionDb(t, config);
  const now = Date.now();
  const account = {
    reference_id: randomUUID(),
    email: 'o@example.com',
    email_key: 'o@example.com',
    name: 'Owner',
    password: 'x',
    permission: 0,
    created_at: now,
    updated_at: now,
  };
  await db('user_account').insert(account);
  const ownerId = Number((await db('user_account').where({ email_key: 'o@example.com' }).first('id')).id);
  const groupRef = randomUUID();
  await db('usergroup').insert({ reference_id: groupRef, name: 'Shared', permission: 0, created_at: now, updated_at: now });
  const groupId = Number((await db('usergroup').where({ reference_id: groupRef }).first('id')).id);
  // Names with case, quotes, %, _, non-ASCII and empty labels; equal sort keys to exercise the id tie-break.
  const names = ['Alpha', 'alpha', 'beta_gamma', '100%', 'Ünïcode', "it's", 'zeta "q"', 'ALPHA two', 'delta', 'Alpha'];
  for (const [i, name] of names.entries()) {
    const ref = randomUUID();
    await db('action').insert({
      reference_id: ref,
      on_type: 'test',
      action_name: `${name}_${i}`,
      label: i % 3 === 0 ? '' : name,
      permission: [0, 1, MAX_PERMISSION, 128 | 16384, 2][i % 5],
      user_account_id: i % 2 ? ownerId : null,
      created_at: now - i * 1000,
      updated_at: now,
    });
    if (i % 4 === 0) {
      const id = Number((await db('action').where({ reference_id: ref }).first('id')).id);
      await db('record_usergroup').insert({ record_type: 'action', record_id: id, usergroup_id: groupId });
    }
  }

  for (const row of await db('action').select('reference_id')) {
    const alone = await readGuarded(store.root, 'action', { reference_id: row.reference_id });
    const along = await readRequestFactsWith(store.root, null, null, guardedRide(store.root, 'action', { reference_id: row.reference_id }));
    t.strictSame(along.value, alone);
  }
  // With a token's subject and a table, the facts are those of readRequestFacts.
  const subject = { referenceId: account.reference_id, kid: null, sid: null };
  const ride = guardedRide(store.root, 'usergroup', { reference_id: groupRef });
  const both = await readRequestFactsWith(store.root, subject, 'action', ride);
  t.strictSame(both.facts, await readRequestFacts(store.root, subject, 'action'), 'the same facts');
  const missing = await readRequestFactsWith(store.root, null, null, guardedRide(store.root, 'usergroup', { reference_id: randomUUID() }));
  t.equal(missing.value, undefined, 'no row: undefined, as on its own');
  const group = await readRequestFactsWith(store.root, null, null, guardedRide(store.root, 'usergroup', { reference_id: groupRef }));
  t.strictSame(group.value, await readGuarded(store.root, 'usergroup', { reference_id: groupRef }), 'a group row belongs to itself');
});
