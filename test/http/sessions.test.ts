// Sessions: every signin opens one, refresh tokens rotate, a reused one ends the session, two
// racing refreshes of one token give exactly one winner, and an ended session's tokens are
// refused on the next request by every instance.
import t from 'tap';
import jwt from 'jsonwebtoken';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { errorCode, PASSWORD, setSignup, startTestServer, withAdmin, type Reply, type TestServer } from '../helpers/server';

const DAY = 24 * 60 * 60 * 1000;
type Item = { ResponseType: string; Attributes: Record<string, unknown> };
const stored = (r: Reply, key: string) =>
  (r.body as Item[]).find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === key)?.Attributes.value as string;

async function setUp(t: Parameters<typeof withAdmin>[0], clock = manualClock()) {
  const s = await withAdmin(t, {}, { clock });
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('kim@example.com');
  const kim = async (userAgent = 'test-agent/1') => {
    const r = await s.call('POST', '/action/user_account/signin', {
      body: { attributes: { email: 'kim@example.com', password: PASSWORD } },
      headers: { 'user-agent': userAgent },
    });
    t.equal(r.status, 200);
    return { token: stored(r, 'token'), refresh: stored(r, 'refresh_token') };
  };
  const refresh = (s2: TestServer, token: string) => s2.action('user_account', 'refresh', { refresh_token: token });
  const me = (token: string, server: TestServer = s) => server.call('GET', '/api/me', { token });
  return { ...s, clock, kim, refresh, me };
}

t.test('signin opens a session: the token item as before, a refresh_token item, sid in the token', async (t) => {
  const s = await setUp(t);
  const r = await s.action('user_account', 'signin', { email: 'kim@example.com', password: PASSWORD });
  const items = r.body as Item[];
  t.same(items[0], { ResponseType: 'client.store.set', Attributes: { key: 'token', value: items[0].Attributes.value } }, 'the token item is unchanged');
  t.match(items[1], { ResponseType: 'client.store.set', Attributes: { key: 'refresh_token', value: /^[A-Za-z0-9_-]{43}$/ } });
  const claims = jwt.decode(String(items[0].Attributes.value)) as Record<string, number | string>;
  t.type(claims.sid, 'string');
  t.equal(Number(claims.exp) - Number(claims.iat), 3600, 'access tokens last 1 h by default');
  const me = await s.me(String(items[0].Attributes.value));
  t.match(me.body.meta.session, { id: claims.sid, current: true, client: '127.0.0.1' });
  const hashes = await s.db('refresh_token').select('token_hash');
  t.notOk(
    hashes.some((h: { token_hash: string }) => h.token_hash === items[1].Attributes.value),
    'only a hash of the refresh token is stored',
  );
});

t.test('refresh rotates; reusing a spent refresh token ends the whole session', async (t) => {
  const s = await setUp(t);
  const first = await s.kim();
  const r1 = await s.refresh(s, first.refresh);
  t.equal(r1.status, 200);
  const second = { token: stored(r1, 'token'), refresh: stored(r1, 'refresh_token') };
  t.not(second.refresh, first.refresh, 'a new refresh token');
  t.equal((jwt.decode(second.token) as { sid: string }).sid, (jwt.decode(first.token) as { sid: string }).sid, 'the same session');
  t.equal((await s.me(second.token)).status, 200);

  s.clock.advance(60_000); // well past the race window: this is a replay
  const replay = await s.refresh(s, first.refresh);
  t.equal(replay.status, 401);
  t.equal(errorCode(replay), 'invalid_token');
  t.equal((await s.me(second.token)).status, 401, "the session's live access token is refused too");
  t.equal((await s.refresh(s, second.refresh)).status, 401, 'and its live refresh token');
  const audit = await s.db('audit_event').where({ event: 'refresh_token_reused' });
  t.equal(audit.length, 1, 'the reuse is audited');
  t.equal((await s.refresh(s, 'not-a-token')).status, 401, 'an unknown refresh token: 401');
  t.equal((await s.action('user_account', 'refresh', {})).status, 400, 'none at all: 400');
});

t.test('two parallel refreshes with one token: exactly one wins, and the session lives on', async (t) => {
  const s = await setUp(t);
  // Two instances on one store, each asked at once.
  const other = await startTestServer(t, {}, s.dataDir, { clock: s.clock });
  const { refresh } = await s.kim();
  const answers = await Promise.all([s, other, s, other, s, other].map((server) => s.refresh(server, refresh)));
  const winners = answers.filter((a) => a.status === 200);
  t.equal(winners.length, 1, 'one winner');
  t.ok(
    answers.every((a) => a.status === 200 || (a.status === 401 && errorCode(a) === 'invalid_token')),
    'the rest: 401 invalid_token',
  );
  const winner = winners[0];
  t.equal((await s.me(stored(winner, 'token'))).status, 200, "the winner's session is not ended by the race");
  t.equal((await s.refresh(other, stored(winner, 'refresh_token'))).status, 200, 'and its refresh token works');
});

t.test('sessions end after 30 days idle and 90 days in all', async (t) => {
  const s = await setUp(t);
  const idle = await s.kim();
  s.clock.advance(31 * DAY);
  t.equal((await s.refresh(s, idle.refresh)).status, 401, '31 days idle');

  let { refresh } = await s.kim();
  for (let day = 29; day <= 87; day += 29) {
    s.clock.advance(29 * DAY);
    const r = await s.refresh(s, refresh);
    t.equal(r.status, 200, `refreshed on day ${day}`);
    refresh = stored(r, 'refresh_token');
  }
  s.clock.advance(4 * DAY);
  t.equal((await s.refresh(s, refresh)).status, 401, 'day 91: over 90 days in all');
});

t.test('list, revoke one, sign out: refused on the next request by every instance', async (t) => {
  const s = await setUp(t);
  const other = await startTestServer(t, {}, s.dataDir, { clock: s.clock });
  const laptop = await s.kim('laptop');
  const phone = await s.kim('phone');
  const listed = await s.action('user_account', 'list_sessions', {}, laptop.token);
  t.equal(listed.status, 200);
  const sessions = (listed.body as Item[]).find((i) => i.ResponseType === 'sessions')!.Attributes.sessions as Array<Record<string, unknown>>;
  t.equal(sessions.length, 2);
  const phoneSession = sessions.find((x) => x.user_agent === 'phone')!;
  t.match(phoneSession, { id: String, created_at: String, last_used_at: String, client: '127.0.0.1', current: false });
  t.equal(sessions.find((x) => x.user_agent === 'laptop')!.current, true);

  t.equal((await s.action('user_account', 'revoke_session', { session_id: phoneSession.id }, laptop.token)).status, 200);
  for (const server of [s, other]) t.equal((await s.me(phone.token, server)).status, 401, 'the revoked session is refused');
  t.equal((await s.refresh(other, phone.refresh)).status, 401, 'and cannot refresh');
  t.equal((await s.me(laptop.token, other)).status, 200, 'the other session is untouched');
  t.equal((await s.action('user_account', 'revoke_session', { session_id: 'nope' }, laptop.token)).status, 404);
  const kimAgain = await s.kim();
  t.equal(
    (await s.action('user_account', 'revoke_session', { session_id: (jwt.decode(s.adminToken) as { sid: string }).sid }, kimAgain.token)).status,
    404,
    "another account's session is not found",
  );

  t.equal((await s.action('user_account', 'signout', {}, laptop.token)).status, 200);
  t.equal((await s.me(laptop.token, other)).status, 401, 'signed out');
  t.equal((await s.action('user_account', 'signout', {})).status, 401, 'guests cannot sign out');
  const events = (await s.db('audit_event').select('event')).map((e: { event: string }) => e.event);
  t.ok(events.includes('session_revoked') && events.includes('signout'));
});

t.test('an auth_version bump ends every session; the changer gets a new one', async (t) => {
  const s = await setUp(t);
  const a = await s.kim();
  const b = await s.kim();
  const changed = await s.action(
    'user_account',
    'change_password',
    { currentPassword: PASSWORD, password: 'a brand new password 42', passwordConfirm: 'a brand new password 42' },
    a.token,
  );
  t.equal(changed.status, 200);
  t.equal((await s.refresh(s, a.refresh)).status, 401, 'the old sessions cannot refresh');
  t.equal((await s.refresh(s, b.refresh)).status, 401);
  const fresh = stored(changed, 'refresh_token');
  t.ok(fresh, 'change_password answers a refresh token');
  t.equal((await s.refresh(s, fresh)).status, 200, 'of a new session');
});

t.test('the shell lists and ends sessions', async (t) => {
  const s = await setUp(t);
  const one = await s.kim('cli-agent');
  const listed = await cli(s.dataDir, ['--json', 'user', 'sessions', 'kim@example.com']);
  t.equal(listed.code, 0, listed.err);
  t.equal(listed.json.account.email, 'kim@example.com');
  t.equal(listed.json.sessions.length, 1);
  t.match(listed.json.sessions[0], { user_agent: 'cli-agent', current: false });
  t.match((await cli(s.dataDir, ['user', 'sessions', 'kim@example.com'])).out, /^ID\s+CREATED\s+LAST USED\s+CLIENT\s+USER AGENT/);
  const ended = await cli(s.dataDir, ['--json', 'user', 'revoke-session', 'kim@example.com', listed.json.sessions[0].id]);
  t.equal(ended.code, 0, ended.err);
  t.equal((await s.me(one.token)).status, 401);
  t.equal((await cli(s.dataDir, ['user', 'revoke-session', 'kim@example.com', 'nope'])).code, 4);
  t.same((await cli(s.dataDir, ['--json', 'user', 'sessions', 'kim@example.com'])).json.sessions, []);
});
