// A code or refresh token that no store could hold (a NUL byte, which PostgreSQL's text refuses
// to bind) is an unknown one: 400 invalid_grant on both stores, never a 500; a real refresh token
// with a NUL after it is unknown too, and the real one still refreshes.
import t from 'tap';
import { addClientFor, providerOn } from '../helpers/oidc';
import { authorizationCode, REDIRECT } from '../helpers/oidc-http';
import { PASSWORD } from '../helpers/server';

t.test('codes and refresh tokens with a NUL byte are unknown (400), on either store', async (t) => {
  const s = await providerOn(t, {});
  const client = await addClientFor(s, REDIRECT, '--first-party');
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
    const code = await token({ grant_type: 'authorization_code', code: value, redirect_uri: REDIRECT });
    t.equal(code.status, 400, `code ${JSON.stringify(value)}`);
    t.equal(((await code.json()) as { error: string }).error, 'invalid_grant');
  }

  // A real refresh token, issued by a real sign-in, with a NUL after it: unknown, and it ends nothing.
  const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
  const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  t.equal(issued.status, 200);
  const real = ((await issued.json()) as { refresh_token: string }).refresh_token;
  t.ok(real, 'a refresh token was issued');
  for (const odd of [`${real}\0`, `${real}\0${real}`]) {
    const refused = await token({ grant_type: 'refresh_token', refresh_token: odd });
    t.equal(refused.status, 400, 'the real token with a NUL after it');
    t.equal(((await refused.json()) as { error: string }).error, 'invalid_grant');
  }
  const refreshed = await token({ grant_type: 'refresh_token', refresh_token: real });
  t.equal(refreshed.status, 200, 'the real one still refreshes');
  t.ok(((await refreshed.json()) as { access_token?: string }).access_token);
});
