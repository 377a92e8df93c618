// Two packaged instances on one PostgreSQL database and the OpenID Connect token endpoint: each
// instance serves clients from memory (oidc/support.ts), so a client removed or given a new secret,
// or a token revoked, on one instance (or from the shell) must be refused at once on the other.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const PW = 'oidc instances password 1';
const AUDIENCE = 'https://api.example.test';

t.test('the token endpoint on two instances: what one removes or revokes, the other refuses at once', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const { serve, shell } = pg;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--no-rate-limits'];
  const [a, b] = await Promise.all([serve(flags), serve(flags)]);
  t.equal((await shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  const add = async (...args: string[]) => JSON.parse((await shell(['--json', 'client', 'add', ...args])).stdout);
  const app = await add('--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party');
  const machine = await add('--name', 'Worker', '--credentials', '--audience', AUDIENCE);

  // A code from A, exchanged and refreshed on B (B now holds the client in memory).
  const first = await authorizationCode(a.url, app.client_id, 'admin@example.com', PW);
  const exchanged = await token(b.url, app, { grant_type: 'authorization_code', code: first.code, redirect_uri: REDIRECT, code_verifier: first.verifier });
  t.equal(exchanged.status, 200, 'exchanged on B');
  const refreshed = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: exchanged.json.refresh_token });
  t.equal(refreshed.status, 200, 'refreshed on B');

  // A refresh token revoked on A is refused on B on the next request.
  const revoked = await fetch(`${a.url}/oidc/token/revocation`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${app.client_id}:${app.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ token: refreshed.json.refresh_token, token_type_hint: 'refresh_token' }).toString(),
  });
  t.equal(revoked.status, 200, 'revoked on A');
  const afterRevoke = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: refreshed.json.refresh_token });
  t.equal(afterRevoke.status, 400, 'B refuses the revoked refresh token');
  t.equal(afterRevoke.json.error, 'invalid_grant');

  // Client credentials on B, then a new secret from the shell: B refuses the old one at once.
  t.equal((await token(b.url, machine, { grant_type: 'client_credentials', resource: AUDIENCE })).status, 200, 'client credentials on B');
  const rotated = JSON.parse((await shell(['--json', 'client', 'rotate-secret', machine.client_id])).stdout);
  const oldSecret = await token(b.url, machine, { grant_type: 'client_credentials', resource: AUDIENCE });
  t.equal(oldSecret.status, 401, 'B refuses the old secret on the next request');
  t.equal(oldSecret.json.error, 'invalid_client');
  t.equal((await token(a.url, machine, { grant_type: 'client_credentials', resource: AUDIENCE })).status, 401, 'and so does A');
  const fresh = { client_id: machine.client_id, client_secret: rotated.client_secret };
  t.equal((await token(b.url, fresh, { grant_type: 'client_credentials', resource: AUDIENCE })).status, 200, 'the new secret works on B');

  // A live chain on B, then the client removed from the shell: B's next refresh is refused.
  const second = await authorizationCode(a.url, app.client_id, 'admin@example.com', PW);
  const chain = await token(b.url, app, { grant_type: 'authorization_code', code: second.code, redirect_uri: REDIRECT, code_verifier: second.verifier });
  t.equal(chain.status, 200);
  const again = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: chain.json.refresh_token });
  t.equal(again.status, 200, 'B refreshes while the client exists');
  t.equal((await shell(['client', 'remove', app.client_id])).code, 0);
  const afterRemove = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: again.json.refresh_token });
  t.ok(afterRemove.status === 400 || afterRemove.status === 401, `B refuses the removed client at once (${afterRemove.status} ${afterRemove.json.error})`);
  t.notOk(afterRemove.json.access_token, 'and issues nothing');
  // The removed client's credentials grant too (B held it in memory from the exchange above).
  t.equal((await shell(['client', 'remove', machine.client_id])).code, 0);
  t.equal((await token(b.url, fresh, { grant_type: 'client_credentials', resource: AUDIENCE })).status, 401, 'a removed machine client is refused on B');

  t.equal(await a.stop(), 0);
  t.equal(await b.stop(), 0);
});
