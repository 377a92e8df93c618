// A code or refresh token that no store could hold (a NUL byte, which PostgreSQL's text refuses
// to bind) is an unknown one: 400 invalid_grant on both stores, never a 500; a real refresh token
// with a NUL after it is unknown too, and the real one still refreshes.
import t from 'tap';
import { addClientFor, providerOn } from '../helpers/oidc';

t.test('codes and refresh tokens with a NUL byte are unknown (400), on either store', async (t) => {
  const s = await providerOn(t, {});
  const client = await addClientFor(s, 'http://localhost:3999/callback');
  const token = (body: Record<string, string>) =>
    fetch(`${s.url}/oidc/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams(body),
    });
  for (const value of ['\0', 'abc\0def', `${'x'.repeat(43)}\0`]) {
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: value });
    t.equal(refresh.status, 400, `refresh_token ${JSON.stringify(value)}`);
    t.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant');
    const code = await token({ grant_type: 'authorization_code', code: value, redirect_uri: 'http://localhost:3999/callback' });
    t.equal(code.status, 400, `code ${JSON.stringify(value)}`);
    t.equal(((await code.json()) as { error: string }).error, 'invalid_grant');
  }
});
