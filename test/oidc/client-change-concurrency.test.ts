// `client set` at the same moment as another change to the client (issue 73): the client is read,
// checked and written in one transaction. Two `client set` changing different settings at once
// both stick; a `client set` sent with a `client remove` either lands before the removal or says
// the client is gone, having written and audited nothing (before, it read the client outside its
// transaction, wrote into nothing, audited client_changed for a client already removed, and only
// then said not_found). On SQLite and on PostgreSQL (`node scripts/test-pg.mjs` runs this file).
import t from 'tap';
import { startTestServer, type TestServer } from '../helpers/server';
import { isAppError } from '../../src/errors';

async function client(s: TestServer, name: string): Promise<string> {
  const added = await s.core.clients.add(s.core.shell, { name, redirectUris: ['https://app.example.com/callback'] });
  return added.client_id;
}

const audited = async (s: TestServer, event: string, clientId: string): Promise<number> => {
  await s.core.settle();
  const rows = (await s.db('audit_event').where({ event }).select('details')) as Array<{ details: string }>;
  return rows.filter((r) => (JSON.parse(r.details) as { client_id?: string }).client_id === clientId).length;
};

t.test('two client set changing different settings at once: both stick', async (t) => {
  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'] });
  for (let round = 0; round < 6; round++) {
    const id = await client(s, `both-${round}`);
    const uri = `http://127.0.0.1:9/logout-${round}`;
    const results = await Promise.allSettled([
      s.core.clients.change(s.core.shell, id, { twoFactor: true }),
      s.core.clients.change(s.core.shell, id, { backchannelLogoutUri: uri }),
    ]);
    t.same(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled'],
      `round ${round}: both changes answered`,
    );
    const shown = await s.core.clients.show(s.core.shell, id);
    t.equal(shown.two_factor, true, `round ${round}: the second factor stuck`);
    t.equal(shown.backchannel_logout_uri, uri, `round ${round}: the logout address stuck`);
    t.equal(await audited(s, 'client_changed', id), 2, `round ${round}: both audited`);
  }
});

t.test('a client set and a client remove at once: the set lands before the removal, or writes and audits nothing', async (t) => {
  const s = await startTestServer(t, { webhookAllowPrivate: ['loopback'] });
  for (let round = 0; round < 8; round++) {
    const id = await client(s, `gone-${round}`);
    const [set, removed] = await Promise.allSettled([s.core.clients.change(s.core.shell, id, { twoFactor: true }), s.core.clients.remove(s.core.shell, id)]);
    t.equal(removed.status, 'fulfilled', `round ${round}: the removal answered`);
    if (set.status === 'fulfilled') {
      t.equal(await audited(s, 'client_changed', id), 1, `round ${round}: the change, made before the removal, is audited`);
    } else {
      t.ok(isAppError(set.reason) && set.reason.code === 'not_found', `round ${round}: the set says the client is gone (${String(set.reason)})`);
      t.equal(await audited(s, 'client_changed', id), 0, `round ${round}: no change audited for a client already removed`);
    }
    t.equal(await audited(s, 'client_removed', id), 1, `round ${round}: the removal is audited`);
  }
});

t.test('two client remove at once: one removes it, the other says it is gone; one removal audited', async (t) => {
  const s = await startTestServer(t);
  for (let round = 0; round < 4; round++) {
    const id = await client(s, `twice-${round}`);
    const results = await Promise.allSettled([s.core.clients.remove(s.core.shell, id), s.core.clients.remove(s.core.shell, id)]);
    t.equal(results.filter((r) => r.status === 'fulfilled').length, 1, `round ${round}: one removal`);
    const refused = results.find((r) => r.status === 'rejected');
    t.ok(refused && isAppError(refused.reason) && refused.reason.code === 'not_found', `round ${round}: the other is not_found`);
    t.equal(await audited(s, 'client_removed', id), 1, `round ${round}: audited once`);
  }
});
