// The packaged executable as an OpenID Connect provider: the code flow walked with plain HTTP
// (the pages' signin form, the provider's redirects), the code exchanged, the user info read and
// the refresh token rotated by openid-client. The in-process OIDC tests run the TypeScript
// sources; this one runs the bundle, whose build (minification, lazy loading) must not change
// what oidc-provider sees.
import t from 'tap';
import * as oidc from 'openid-client';
import { exeFolder, runExe, serveExe } from '../helpers/exe';

const REDIRECT = 'http://localhost:3999/callback';
const PASSWORD = 'a long enough passphrase 42';

/** One browser: a cookie jar, redirects followed by hand. */
function browser(base: string) {
  const jar = new Map<string, string>();
  return async (url: string, init: RequestInit = {}): Promise<Response> => {
    const res = await fetch(url.startsWith('http') ? url : base + url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  };
}

t.test('the executable signs a relying party in: code, tokens, user info, refresh', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const data = ['--data-dir', `${dir}/data`];
  const server = await serveExe(t, exe, [...data, '--no-rate-limits'], { env, cwd: dir });
  const signup = await fetch(`${server.publicUrl}/action/user_account/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'rp@example.com', name: 'Relying', password: PASSWORD, passwordConfirm: PASSWORD } }),
  });
  t.equal(signup.status, 200, 'signed up');
  const added = await runExe(exe, [...data, '--json', 'client', 'add', '--name', 'Notes', '--redirect-uri', REDIRECT, '--first-party'], { env, cwd: dir });
  t.equal(added.code, 0, added.stderr);
  const client = JSON.parse(added.stdout) as { client_id: string; client_secret: string };

  const config = await oidc.discovery(new URL(server.publicUrl), client.client_id, client.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const authorize = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email offline_access',
    prompt: 'consent',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  });

  const go = browser(server.publicUrl);
  const form = await (await go('/signin')).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(form)?.[1] ?? '';
  const signin = await go('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email: 'rp@example.com', password: PASSWORD }).toString(),
  });
  t.equal(signin.status, 303, 'signed in on the pages');
  let location = authorize.href;
  let callback: URL | null = null;
  for (let i = 0; i < 10 && !callback; i++) {
    const res = await go(location);
    await res.arrayBuffer();
    const next = res.headers.get('location');
    if (!next) throw new Error(`the authorization stopped at ${res.status}`);
    if (next.startsWith(REDIRECT)) callback = new URL(next);
    else location = next;
  }
  t.ok(callback?.searchParams.get('code'), 'an authorization code came back');

  const tokens = await oidc.authorizationCodeGrant(config, callback!, { pkceCodeVerifier: verifier, expectedState: state });
  const claims = tokens.claims()!;
  t.equal(claims.iss, server.publicUrl, 'the ID token names the executable as issuer');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  t.equal(info.email, 'rp@example.com', 'user info answers with the email scope');
  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
  t.ok(refreshed.access_token, 'the refresh token is exchanged');
  t.not(refreshed.refresh_token, tokens.refresh_token, 'and rotated');
  t.notMatch(server.output(), /oidc_server_error/, 'the provider logged no failure');
  t.equal(await server.stop(), 0);
});
