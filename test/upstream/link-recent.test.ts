// Linking another provider adds a lasting way in: like a passkey or an API key, it needs a recent
// sign-in (an outsider's review found a stale or copied session could link the attacker's account).
import t from 'tap';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { startHostileUpstream } from '../helpers/hostile-upstream';
import { PASSWORD, startTestServer } from '../helpers/server';
import type { Caller } from '../../src/core';

t.test('a stale session cannot start a link; a fresh one can; the page sends the person to confirm it is them', async (t) => {
  const clock = manualClock();
  const s = await startTestServer(t, {}, undefined, { clock });
  await s.signup('admin@example.com');
  await s.core.accounts.create(s.core.shell, { email: 'ada@example.com', password: PASSWORD });
  const up = await startHostileUpstream(t, 'c');
  const added = await cli(s.dataDir, ['provider', 'add', '--name', 'corp', '--issuer', up.issuer, '--client-id', 'c', '--client-secret-env', 'S'], {
    env: { S: 'x' },
  });
  t.equal(added.code, 0, added.err);
  const token = await s.signin('ada@example.com');
  const caller: Caller = { token, client: '127.0.0.1', userAgent: null };
  const begin = () => s.core.providers.begin(caller, 'corp', { purpose: 'link', binding: 'b', carry: {} });
  t.match(await begin(), /^http/, 'just after signing in: to the provider');

  clock.advance(11 * 60 * 1000);
  await t.rejects(begin(), { code: 'reauthentication_required' }, 'eleven minutes later: confirm it is you first');
  t.equal((await s.action('user_account', 'reauthenticate', { password: PASSWORD }, token)).status, 200);
  t.match(await begin(), /^http/, 'after the password was entered again');
});
