// Audit.recordAll (an import's thousands of events, written a chunk at a time) records exactly
// what Audit.record does one event at a time: the same audit rows in the same order, the same log
// lines, and the same messages for webhooks and SCIM targets (one per event and endpoint, the
// same payloads), across more events than one chunk holds. Both runs are made on one store, with
// a webhook, a SCIM target for everyone and one scoped to a group nested in another, and a clock
// that stands still, so every column may be compared.
import t from 'tap';
import { loadConfig } from '../../src/config';
import { Audit, type AuditEntry } from '../../src/audit';
import { SHELL } from '../../src/actor';
import { createLogger } from '../../src/log';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { inspectionDb, openTestStore } from '../helpers/db';
import { storeFlags, tempDir } from '../helpers/server';

const LOOPBACK = ['--webhook-allow-private', 'loopback'];

t.test('recordAll writes what record writes, event by event, chunk boundaries included', async (t) => {
  const dir = tempDir(t);
  const config = loadConfig(await storeFlags(t, dir), {});
  const ok = async (args: string[], stdin?: string) => {
    const r = await cli(dir, ['--json', ...args], { stdin });
    t.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    return r.json;
  };
  await ok(['migrate']);
  for (const e of ['ann@example.com', 'bob@example.com'])
    await ok(['user', 'create', '--email', e, '--name', e.slice(0, 3), '--password-stdin'], 'a long enough password');
  for (const g of ['staff', 'all']) await ok(['group', 'create', g]);
  await ok(['group', 'add-group', 'all', 'staff']);
  await ok([...LOOPBACK, 'webhook', 'add', '--url', 'http://127.0.0.1:9/hook']);
  await ok([...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim', '--token-stdin', '--name', 'everyone'], 'token-1\n');
  await ok([...LOOPBACK, 'scim', 'target', 'add', '--url', 'http://127.0.0.1:9/scim2', '--token-stdin', '--name', 'staff', '--group', 'all'], 'token-2\n');
  const ann = (await ok(['user', 'show', 'ann@example.com'])).reference_id as string;
  const bob = (await ok(['user', 'show', 'bob@example.com'])).reference_id as string;
  const staff = (await ok(['group', 'show', 'staff'])).reference_id as string;

  const clock = manualClock(Date.UTC(2026, 11, 12, 9, 0, 0));
  const store = await openTestStore(t, config, clock);
  const lines: string[] = [];
  const audit = new Audit(
    store,
    createLogger((l) => lines.push(l), 'info'),
    clock,
  );
  const db = inspectionDb(t, config);

  const kinds: AuditEntry[] = [
    { event: 'account_imported', fields: { account: ann } },
    { event: 'group_member_added', fields: { account: ann, group: staff, group_name: 'staff' } },
    { event: 'name_changed', fields: { account: bob } },
    { event: 'signin_failed', fields: { account: bob, reason: 'password' }, level: 'warn' },
    { event: 'account_deleted', fields: { account: bob }, about: { id: bob, email: 'bob@example.com', name: 'bob' } },
    { event: 'group_nested', fields: { account: null, group: staff, group_name: 'staff', member_group: staff, member_group_name: 'staff' } },
    { event: 'key_rotated', fields: { account: null, kid: 'k1' } },
  ];
  // More than one chunk (500) and not a multiple of it.
  const entries = Array.from({ length: 1203 }, (_, i) => kinds[i % kinds.length]);

  const marks = async () => ({
    audit: Number((await db('audit_event').max({ n: 'id' }).first())?.n ?? 0),
    delivery: Number((await db('delivery').max({ n: 'id' }).first())?.n ?? 0),
  });
  const since = async (m: { audit: number; delivery: number }) => ({
    audit: (await db('audit_event').where('id', '>', m.audit).orderBy('id')).map(({ id: _id, ...row }) => row),
    delivery: (await db('delivery').where('id', '>', m.delivery).orderBy('id')).map(({ id: _id, message_id: _m, ...row }) => row),
  });
  const logged = () =>
    lines.splice(0).flatMap((chunk) =>
      chunk
        .split('\n')
        .filter(Boolean)
        .map((l) => ({ ...JSON.parse(l), time: undefined })),
    );

  const before = await marks();
  for (const e of entries) await audit.record(e.event, SHELL, e.fields, e.level, e.about);
  await new Promise((r) => setImmediate(r));
  const one = { ...(await since(before)), log: logged() };

  const middle = await marks();
  await audit.recordAll(SHELL, entries);
  await new Promise((r) => setImmediate(r));
  const all = { ...(await since(middle)), log: logged() };

  t.equal(one.audit.length, entries.length, 'one audit row per event');
  t.ok(one.delivery.some((d) => d.kind === 'webhook') && one.delivery.some((d) => d.kind === 'scim'), 'the events made webhook and SCIM messages');
  t.same(all.audit, one.audit, 'the same audit rows, in the same order');
  t.same(all.delivery, one.delivery, 'the same messages, in the same order');
  t.same(all.log, one.log, 'the same log lines');
  t.ok(all.log.length >= entries.length);
});
