// Two packaged instances on one PostgreSQL database: a person revokes an app on one instance while
// the app refreshes its token on the other, at the same moment. Whichever commits first, no token
// of the app stays alive (its refresh token and any access token the refresh got are refused, and
// the store holds none); sign out everywhere else on one instance ends the session the other serves.
import t from 'tap';
import knexFactory from 'knex';
import { twoInstances } from '../helpers/pg';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const PW = 'own pages instances password';

t.test('revoke on one instance, refresh on the other, at once: no live token', async (t) => {
  const pg = await twoInstances(t, PW);
  if (!pg) return;
  const { a, b, shell, action, signin } = pg;
  const app = JSON.parse((await shell(['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party'])).stdout);
  const db = knexFactory({ client: 'pg', connection: pg.db });
  t.teardown(() => db.destroy());
  const me = await signin(a.url);

  for (let trial = 0; trial < 8; trial++) {
    const { code, verifier } = await authorizationCode(b.url, app.client_id, 'admin@example.com', PW);
    const first = await token(b.url, app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    t.equal(first.status, 200);
    const [revoked, refreshed] = await Promise.all([
      action(a.url, 'revoke_app', { kind: 'oidc', app_id: app.client_id }, me),
      token(b.url, app, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token }),
    ]);
    t.equal(revoked.status, 200, `trial ${trial}: revoked`);
    if (refreshed.status === 200) {
      t.equal((await token(a.url, app, { grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token })).json.error, 'invalid_grant');
      t.equal((await fetch(`${a.url}/oidc/me`, { headers: { authorization: `Bearer ${refreshed.json.access_token}` } })).status, 401);
    }
    t.equal((await token(b.url, app, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token })).json.error, 'invalid_grant');
    const live = await db('oidc_payload').whereIn('model', ['Grant', 'AccessToken', 'RefreshToken', 'AuthorizationCode']).whereNotNull('account');
    t.same(live, [], `trial ${trial}: no grant or token left`);
  }

  const other = await signin(b.url);
  const ended = await action(a.url, 'signout_others', {}, me);
  t.equal(ended.status, 200);
  t.equal((await fetch(`${b.url}/api/me`, { headers: { authorization: `Bearer ${other}` } })).status, 401, 'the other instance refuses the ended session');
  t.equal((await fetch(`${b.url}/api/me`, { headers: { authorization: `Bearer ${me}` } })).status, 200, 'the caller’s own stays');
});
