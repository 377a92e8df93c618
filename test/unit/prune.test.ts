// Pruning keeps the counters and token tables from growing without bound.
import t from 'tap';
import { prune, hit } from '../../src/store/counters';
import { issueToken, pruneTokens } from '../../src/store/account-tokens';
import { startTestServer } from '../helpers/server';
import { openTestStore } from '../helpers/db';
import { manualClock } from '../helpers/clock';

t.test('old counters and long-expired tokens are pruned; current ones stay', async (t) => {
  const s = await startTestServer(t);
  await s.signup('p@example.com');
  const db = s.db;
  const day = 86400_000;
  const clock = manualClock();
  const store = await openTestStore(t, s.config, clock);
  clock.advance(-2 * day);
  await hit(store.root, 'signin_email:old@example.com', 900_000);
  clock.advance(2 * day);
  await hit(store.root, 'signin_email:new@example.com', 900_000);
  t.equal(await prune(store.root, day), 1);
  const left = (await db('rate_counter').select('counter_key')).map((r: { counter_key: string }) => r.counter_key);
  t.ok(left.includes('signin_email:new@example.com') && !left.includes('signin_email:old@example.com'));
  const account = await db('user_account').first('id');
  await issueToken(store.root, account.id, 'verify_email', 'p@example.com', 60);
  await db('account_token').insert({
    account_id: account.id,
    purpose: 'verify_email',
    token_hash: 'x'.repeat(64),
    email_key: 'p@example.com',
    expires_at: Date.now() - 2 * day,
    created_at: Date.now() - 3 * day,
  });
  t.equal(await pruneTokens(store.root), 1);
  t.equal(Number((await db('account_token').count({ n: '*' }).first())?.n), 1);
});
