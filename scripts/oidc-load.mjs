// The OpenID Connect token endpoint under load, for npm run bench: authorization codes are
// collected first (a signed-in page session walks the authorization, login and consent steps
// with plain HTTP, as a browser would), then exchanged at /oidc/token by `connections` workers;
// then each worker refreshes its own chain (refresh tokens rotate, so a chain is sequential).
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuOf } from './process.mjs';

export const REDIRECT = 'http://localhost:3999/callback';
export const BARE_SECRET = 'bench-secret-of-the-bare-provider-0123456789';
/** The resource server that client-credentials tokens are for, on both providers. */
export const AUDIENCE = 'https://api.bench.example';
const b64url = (b) => b.toString('base64url');

/** A cookie jar of one browser, and requests that follow redirects by hand through it. */
export function browser(base) {
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

/** One authorization code (with its PKCE verifier), following the provider's redirects in `b`. */
export async function authorizationCode(b, clientId, scope = 'openid offline_access') {
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const params = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope,
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

/** Codes first (their cost is the authorization steps, not the token endpoint), then the load. */
async function tokenEndpointLoad({ url, b, clientId, clientSecret, connections, seconds, pid }) {
  /** CPU (µs) the server's threads spent per request since `before` (when its pid is known). */
  const cpuSince = (before, n) => {
    if (!pid) return undefined;
    const after = cpuOf(pid);
    return { main: ((after.main - before.main) * 1000) / n, others: ((after.others - before.others) * 1000) / n };
  };
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
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

  const codes = [];
  const deadline = performance.now() + seconds * 1000;
  // One at a time: the provider's interaction cookies are per flow, and this jar ignores paths.
  while (performance.now() < deadline && codes.length < 400) codes.push(await authorizationCode(b, clientId));

  let next = 0;
  const exchangeMs = [];
  const cpu0 = pid ? cpuOf(pid) : null;
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
  const exchange = { rps: codes.length / ((performance.now() - t0) / 1000), p99: p99(exchangeMs), n: codes.length, cpu: cpuSince(cpu0, codes.length) };

  const refreshMs = [];
  const cpu1 = pid ? cpuOf(pid) : null;
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
  const refresh = {
    rps: refreshMs.length / ((performance.now() - t1) / 1000),
    p99: p99(refreshMs),
    n: refreshMs.length,
    cpu: cpuSince(cpu1, refreshMs.length),
  };
  return { exchange, refresh };
}

/**
 * Client-credentials grants: `connections` workers asking for a token for AUDIENCE (a JWT access
 * token, RFC 9068, signed like every other token), each in turn, for `seconds`.
 */
export async function clientCredentialsLoad({ url, clientId, clientSecret, connections, seconds, pid }) {
  const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  const body = new URLSearchParams({ grant_type: 'client_credentials', resource: AUDIENCE }).toString();
  const ms = [];
  const cpu0 = pid ? cpuOf(pid) : null;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await fetch(`${url}/oidc/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body,
        });
        const json = await res.json();
        if (!res.ok || !json.access_token) throw new Error(`client credentials: ${res.status} ${json.error}`);
        ms.push(performance.now() - started);
      }
    }),
  );
  const n = ms.length;
  const cpu = pid ? cpuOf(pid) : null;
  return {
    rps: n / ((performance.now() - t0) / 1000),
    p99: ms.sort((x, y) => x - y)[Math.floor(n * 0.99)] ?? 0,
    n,
    cpu: cpu ? { main: ((cpu.main - cpu0.main) * 1000) / n, others: ((cpu.others - cpu0.others) * 1000) / n } : undefined,
  };
}

/** Gatehouse's client-credentials figures: a confidential client for AUDIENCE added from the shell. */
export async function oidcCredentialsFigures({ exe, cliArgs, env, url, connections, seconds, pid }) {
  const added = JSON.parse(
    execFileSync(exe, [...cliArgs, '--json', 'client', 'add', '--name', 'Bench machine', '--credentials', '--audience', AUDIENCE], { env, encoding: 'utf8' }),
  );
  return clientCredentialsLoad({ url, clientId: added.client_id, clientSecret: added.client_secret, connections, seconds, pid });
}

/** Gatehouse's provider: a first-party client added from the shell, the account signed in on the pages. */
export async function oidcTokenFigures({ exe, cliArgs, env, url, email, password, connections, seconds, pid }) {
  const added = JSON.parse(
    execFileSync(exe, [...cliArgs, '--json', 'client', 'add', '--name', 'Bench', '--redirect-uri', REDIRECT, '--first-party'], { env, encoding: 'utf8' }),
  );
  const b = browser(url);
  const page = await (await b.request('/signin')).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)[1];
  await b.request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email, password }).toString(),
  });
  return tokenEndpointLoad({ url, b, clientId: added.client_id, clientSecret: added.client_secret, connections, seconds, pid });
}

/**
 * A bare oidc-provider (scripts/oidc-bare-server.mjs: the same library and version, its own
 * in-memory storage, interactions answered at once), loaded the same way: the yardstick for
 * Gatehouse's token endpoint.
 */
export async function bareOidcTokenFigures({ connections, seconds }) {
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'oidc-bare-server.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise((resolve, reject) => {
      child.stdout.once('data', (c) => resolve(JSON.parse(c).url));
      child.once('exit', (code) => reject(new Error(`the bare provider exited with ${code}`)));
    });
    const tokens = await tokenEndpointLoad({ url, b: browser(url), clientId: 'bench', clientSecret: BARE_SECRET, connections, seconds, pid: child.pid });
    const credentials = await clientCredentialsLoad({ url, clientId: 'bench-machine', clientSecret: BARE_SECRET, connections, seconds, pid: child.pid });
    return { ...tokens, credentials };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
}
