/**
 * An upstream provider whose ID tokens carry the `amr` a test sets, and a browser without a
 * browser (fetch, one cookie jar, redirects followed by hand) to sign in through it and to walk an
 * OpenID Connect authorization of Gatehouse's to its ID token.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Test } from 'tap';
import { REDIRECT } from './oidc';
import { token } from './oidc-http';
import type { TestServer } from './server';

/** A small honest provider (jose, node:http) whose ID tokens carry the `amr` a test sets. */
export async function amrProvider(t: Test, clientId: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, string>();
  const state = { issuer: '', amr: undefined as unknown, sub: 'sub-1', email: 'ann@example.com' };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', state.issuer);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration')
      return json({
        issuer: state.issuer,
        authorization_endpoint: `${state.issuer}/authorize`,
        token_endpoint: `${state.issuer}/token`,
        jwks_uri: `${state.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(12).toString('hex');
      codes.set(code, url.searchParams.get('nonce') ?? '');
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', state.issuer);
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const code = new URLSearchParams(body).get('code') ?? '';
      const nonce = codes.get(code);
      codes.delete(code);
      if (nonce === undefined) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
      const now = Math.floor(Date.now() / 1000);
      const claims: Record<string, unknown> = { nonce, email: state.email, email_verified: true, name: 'Ann' };
      if (state.amr !== undefined) claims.amr = state.amr;
      const idToken = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(state.issuer)
        .setAudience(clientId)
        .setSubject(state.sub)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey);
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}

/** A browser: one cookie jar for Gatehouse, redirects followed by hand (to the provider too). */
export function browser(s: TestServer) {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const target = url.startsWith(s.config.publicUrl) ? s.url + url.slice(s.config.publicUrl.length) : url.startsWith('/') ? s.url + url : url;
    const own = target.startsWith(s.url);
    const res = await fetch(target, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(own ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        cookies.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  };
  const form = (url: string, fields: Record<string, string>) =>
    go(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ csrf: cookies.get('gatehouse_csrf') ?? '', ...fields }).toString(),
    });
  /** "Continue with …" on the sign-in page, through the provider, to the page the callback shows. */
  const throughProvider = async (name: string) => {
    await go('/signin');
    const started = await form(`/signin/provider/${name}`, {});
    const back = await go(started.location!);
    return go(back.location!);
  };
  /** An OpenID Connect authorization for `clientId` (PKCE), walked to its code, then the ID token's claims. */
  const idTokenFor = async (client: { client_id: string; client_secret?: string }) => {
    const verifier = randomBytes(32).toString('base64url');
    const params = new URLSearchParams({
      client_id: client.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 'st',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    let location = `/oidc/auth?${params}`;
    for (let hops = 0; hops < 10 && !location.startsWith(REDIRECT); hops++) {
      const r = await go(location);
      if (!r.location) throw new Error(`the authorization stopped at ${r.status}: ${r.text.slice(0, 300)}`);
      location = r.location;
    }
    const code = new URL(location).searchParams.get('code');
    if (!code) throw new Error(`no code: ${location}`);
    const issued = await token(s.url, client as { client_id: string; client_secret: string }, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    if (issued.status !== 200) throw new Error(JSON.stringify(issued.json));
    return JSON.parse(Buffer.from(issued.json.id_token!.split('.')[1]!, 'base64url').toString('utf8')) as { amr: string[] };
  };
  /** The access token of the page session this browser holds (its session cookie). */
  const pageToken = () => {
    const token = (cookies.get('gatehouse_session') ?? '').split('~')[0];
    if (!token) throw new Error('not signed in');
    return token;
  };
  return { go, form, throughProvider, idTokenFor, pageToken };
}
