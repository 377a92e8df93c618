// The OpenID Connect token endpoint under load, for npm run bench: authorization codes are
// collected first (a signed-in page session walks the authorization, login and consent steps
// with plain HTTP, as a browser would), then exchanged at /oidc/token by `connections` workers;
// then each worker refreshes its own chain (refresh tokens rotate, so a chain is sequential).
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';

const REDIRECT = 'http://localhost:3999/callback';
const b64url = (b) => b.toString('base64url');

/** A cookie jar of one browser, and requests that follow redirects by hand through it. */
function browser(base) {
  const jar = new Map();
  const keep = (res) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  return {
    jar,
    async request(url, init = {}) {
      const res = await fetch(url.startsWith('http') ? url : base + url, {
        ...init,
        redirect: 'manual',
        headers: { ...(init.headers ?? {}), cookie: cookie() },
      });
      keep(res);
      return res;
    },
  };
}

export async function oidcTokenFigures({ exe, cliArgs, env, url, email, password, connections, seconds }) {
  const added = JSON.parse(
    execFileSync(exe, [...cliArgs, '--json', 'client', 'add', '--name', 'Bench', '--redirect-uri', REDIRECT, '--first-party'], { env, encoding: 'utf8' }),
  );
  const basic = `Basic ${Buffer.from(`${added.client_id}:${added.client_secret}`).toString('base64')}`;
  const b = browser(url);
  const page = await (await b.request('/signin')).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)[1];
  await b.request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email, password }).toString(),
  });

  /** One authorization code (with its PKCE verifier), through the provider's redirects. */
  async function code() {
    const verifier = b64url(randomBytes(32));
    const challenge = b64url(createHash('sha256').update(verifier).digest());
    const params = new URLSearchParams({
      client_id: added.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      prompt: 'consent',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'bench',
    });
    let location = `/oidc/auth?${params}`;
    for (let i = 0; i < 10; i++) {
      const res = await b.request(location);
      await res.arrayBuffer();
      location = res.headers.get('location');
      if (!location) throw new Error(`the authorization stopped at ${res.status}`);
      if (location.startsWith(REDIRECT)) return { code: new URL(location).searchParams.get('code'), verifier };
    }
    throw new Error('too many redirects');
  }

  const token = async (body) => {
    const started = performance.now();
    const res = await fetch(`${url}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
      body: new URLSearchParams(body).toString(),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`token endpoint: ${res.status} ${json.error}`);
    return { json, ms: performance.now() - started };
  };
  const p99 = (ms) => ms.sort((x, y) => x - y)[Math.floor(ms.length * 0.99)] ?? 0;

  // Codes first (their cost is the authorization steps, not the token endpoint).
  const codes = [];
  const deadline = performance.now() + seconds * 1000;
  // One at a time: the provider's interaction cookies are per flow, and this jar ignores paths.
  while (performance.now() < deadline && codes.length < 400) codes.push(await code());

  let next = 0;
  const exchangeMs = [];
  const refreshTokens = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < codes.length) {
        const c = codes[next++];
        const r = await token({ grant_type: 'authorization_code', code: c.code, redirect_uri: REDIRECT, code_verifier: c.verifier });
        exchangeMs.push(r.ms);
        refreshTokens.push(r.json.refresh_token);
      }
    }),
  );
  const exchange = { rps: codes.length / ((performance.now() - t0) / 1000), p99: p99(exchangeMs), n: codes.length };

  const refreshMs = [];
  const until = performance.now() + seconds * 1000;
  const t1 = performance.now();
  await Promise.all(
    refreshTokens.slice(0, connections).map(async (rt) => {
      let current = rt;
      while (performance.now() < until) {
        const r = await token({ grant_type: 'refresh_token', refresh_token: current });
        refreshMs.push(r.ms);
        current = r.json.refresh_token;
      }
    }),
  );
  const refresh = { rps: refreshMs.length / ((performance.now() - t1) / 1000), p99: p99(refreshMs), n: refreshMs.length };
  return { exchange, refresh };
}
