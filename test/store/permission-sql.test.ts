// can() and its SQL twin (permittedSql, used by every list) give the same answer for random
// permission integers, owners, shared groups and principals, on a real store.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import fc from 'fast-check';
import { loadConfig } from '../../src/config';
import { can, Principal } from '../../src/permission/check';
import { MAX_PERMISSION, OPERATIONS } from '../../src/permission/bits';
import { permittedSql } from '../../src/store/readable';
import { readGuarded, GuardedTable } from '../../src/store/guarded-rows';
import { openTestStore, inspectionDb } from '../helpers/db';
import { storeFlags, tempDir } from '../helpers/server';

const ACCOUNTS = 3;
const GROUPS = 3;

t.test('can() and permittedSql agree', async (t) => {
  const config = loadConfig(await storeFlags(t, tempDir(t)), {});
  const store = await openTestStore(t, config);
  const db = inspectionDb(t, config);
  const now = Date.now();
  const common = () => ({ reference_id: randomUUID(), created_at: now, updated_at: now });
  const accountIds: number[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    await db('user_account').insert({ ...common(), email: `p${i}@example.com`, email_key: `p${i}@example.com`, name: `p${i}`, password: 'x', permission: 0 });
    accountIds.push(
      Number(
        (
          await db('user_account')
            .where({ email_key: `p${i}@example.com` })
            .first('id')
        ).id,
      ),
    );
  }
  const groupIds: number[] = [];
  for (let i = 0; i < GROUPS; i++) {
    const ref = randomUUID();
    await db('usergroup').insert({ ...common(), reference_id: ref, name: `g${i}`, permission: 0 });
    groupIds.push(Number((await db('usergroup').where({ reference_id: ref }).first('id')).id));
  }

  const rowSpec = fc.record({
    permission: fc.oneof(fc.integer({ min: 0, max: MAX_PERMISSION }), fc.constantFrom(0, 1, 2, 128, 256, 16384, 32768, MAX_PERMISSION)),
    owner: fc.option(fc.integer({ min: 0, max: ACCOUNTS - 1 }), { nil: null }),
    shared: fc.subarray([...Array(GROUPS).keys()]),
  });
  const principalSpec = fc.record({
    account: fc.option(fc.integer({ min: 0, max: ACCOUNTS - 1 }), { nil: null }),
    groups: fc.subarray([...Array(GROUPS).keys()]),
    // Indexes of rows of this run: in the usergroup table, a group row is shared with itself.
    ownRows: fc.subarray([0, 1, 2, 3, 4]),
    isAdmin: fc.boolean(),
  });

  let runs = 0;
  for (const table of ['action', 'usergroup'] as GuardedTable[]) {
    await fc.assert(
      fc.asyncProperty(fc.array(rowSpec, { minLength: 1, maxLength: 5 }), principalSpec, fc.constantFrom(...OPERATIONS), async (rows, p, op) => {
        const refs: string[] = [];
        const ids: number[] = [];
        for (const [i, r] of rows.entries()) {
          const ref = randomUUID();
          const extra = table === 'action' ? { on_type: 'test', action_name: `a${runs}_${i}`, label: 'test' } : { name: `r${runs}_${i}` };
          await db(table).insert({
            ...common(),
            reference_id: ref,
            permission: r.permission,
            user_account_id: r.owner === null ? null : accountIds[r.owner],
            ...extra,
          });
          const id = Number((await db(table).where({ reference_id: ref }).first('id')).id);
          for (const g of r.shared) await db('record_usergroup').insert({ record_type: table, record_id: id, usergroup_id: groupIds[g] });
          refs.push(ref);
          ids.push(id);
        }
        runs++;
        const principalGroups = new Set(p.groups.map((g) => groupIds[g]));
        if (table === 'usergroup' && p.account !== null) for (const i of p.ownRows) if (i < ids.length) principalGroups.add(ids[i]);
        const principal: Principal = {
          accountId: p.account === null ? null : accountIds[p.account],
          referenceId: null,
          groupIds: principalGroups,
          isAdmin: p.isAdmin,
        };
        const { sql, params } = permittedSql(table, principal, op);
        const placeholders = refs.map(() => '?').join(', ');
        const raw = await db.raw(`SELECT reference_id FROM ${table} t WHERE ${sql} AND t.reference_id IN (${placeholders})`, [...params, ...refs] as never[]);
        const sqlRows = (Array.isArray(raw) ? raw : raw.rows) as Array<{ reference_id: string }>;
        const allowedBySql = new Set(sqlRows.map((r) => r.reference_id));
        for (const ref of refs) {
          const guarded = await readGuarded(store.root, table, { reference_id: ref });
          const byCan = can(principal, op, guarded!.guard);
          if (byCan !== allowedBySql.has(ref)) return false;
        }
        await db('record_usergroup').where({ record_type: table }).whereIn('record_id', ids).del();
        await db(table).whereIn('id', ids).del();
        return true;
      }),
      { numRuns: 150, seed: 20261122 },
    );
  }
  t.ok(runs >= 300, `${runs} random cases, every row decided alike by can() and by SQL`);
});
