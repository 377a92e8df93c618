// Two packaged instances on one PostgreSQL database and the OpenID Connect token endpoint: each
// instance serves clients from memory (oidc/support.ts), so a client removed or given a new secret,
// or a token revoked, on one instance (or from the shell) must be refused at once on the other.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { onPostgres } from '../helpers/pg';

const PW = 'oidc instances password 1';
const REDIRECT = 'http://localhost:3999/callback';
const AUDIENCE = 'https://api.example.test';

/** A browser's cookie jar on one instance; redirects to the public URL's origin are followed on it. */
function browser(base: string) {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}) => {
    const target = url.startsWith('http') ? base + new URL(url).pathname + new URL(url).search : base + url;
    const res = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  };
}

/** Signs in on `base`'s pages and walks an authorization to its code (PKCE), as a browser would. */
async function authorizationCode(base: string, clientId: string, email: string) {
  const request = browser(base);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await request('/signin')).text())![1];
  await request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email, password: PW }).toString(),
  });
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid offline_access',
    prompt: 'consent',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  let location = `/oidc/auth?${params}`;
  for (let i = 0; i < 10; i++) {
    const res = await request(location);
    await res.arrayBuffer();
    location = res.headers.get('location') ?? '';
    if (location.startsWith(REDIRECT)) return { code: new URL(location).searchParams.get('code')!, verifier };
    if (!location) throw new Error(`the authorization stopped at ${res.status}`);
  }
  throw new Error('too many redirects');
}

async function token(base: string, client: { client_id: string; client_secret: string }, body: Record<string, string>) {
  const res = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, json: (await res.json()) as Record<string, string> };
}

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
  const first = await authorizationCode(a.url, app.client_id, 'admin@example.com');
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
  const second = await authorizationCode(a.url, app.client_id, 'admin@example.com');
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
