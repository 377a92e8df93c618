/**
 * The OpenID Connect provider over plain HTTP, as a browser and a relying party would use it (no
 * library in between): the page sign-in, the authorization's redirects to a code, the token
 * endpoint. For tests that need many flows quickly or against several instances.
 */
import { createHash, randomBytes } from 'node:crypto';

export const REDIRECT = 'http://localhost:3999/callback';

/** A browser's cookie jar on one instance; redirects to the public URL's origin are followed on it. */
export function browser(base: string) {
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

/**
 * Signs in on `base`'s pages and walks an authorization to its code (PKCE), as a browser would.
 * An authorization refused comes back with a null code and the error the app was sent.
 */
export async function authorizationCode(base: string, clientId: string, email: string, password: string, scope = 'openid offline_access') {
  const request = browser(base);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await request('/signin')).text())![1];
  await request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email, password }).toString(),
  });
  const verifier = randomBytes(32).toString('base64url');
  const params = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope,
    prompt: 'consent',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  let location = `/oidc/auth?${params}`;
  for (let i = 0; i < 10; i++) {
    const res = await request(location);
    await res.arrayBuffer();
    location = res.headers.get('location') ?? '';
    if (location.startsWith(REDIRECT)) {
      const back = new URL(location).searchParams;
      return { code: back.get('code')!, verifier, error: back.get('error') };
    }
    if (!location) throw new Error(`the authorization stopped at ${res.status}`);
  }
  throw new Error('too many redirects');
}

export async function token(base: string, client: { client_id: string; client_secret: string }, body: Record<string, string>) {
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
