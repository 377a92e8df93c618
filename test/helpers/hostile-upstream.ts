/**
 * A small OpenID Connect provider that lies on purpose (written with jose and node:http): its
 * discovery, JWKS, authorization and token endpoints answer as a provider would, except in the
 * way `mode` says (a wrong issuer, audience, nonce or signature, an expired token, an error for a
 * code of another client, junk, or no answer at all).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { Test } from 'tap';
import type { TestServer } from './server';

export type Mode =
  | 'good'
  | 'wrong_iss'
  | 'wrong_aud'
  | 'wrong_nonce'
  | 'bad_sig'
  | 'expired'
  | 'other_client_code'
  | 'junk_token'
  | 'hang_token'
  | 'junk_discovery'
  | 'hang_discovery';

export interface Hostile {
  issuer: string;
  mode: Mode;
  /** The email the next ID token names (and whether it says it is verified). */
  email: string;
  emailVerified: boolean;
  sub: string;
  /** The name claim of the next ID token. */
  name: string;
}

export async function startHostileUpstream(t: Test, clientId: string): Promise<Hostile> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string; redirect: string }>();
  const hanging = new Set<http.ServerResponse>();
  const state: Hostile = { issuer: '', mode: 'good', email: 'mallory@example.com', emailVerified: true, sub: 'sub-1', name: 'Mallory' };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', state.issuer);
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration') {
      if (state.mode === 'hang_discovery') return void hanging.add(res);
      if (state.mode === 'junk_discovery') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer": 42, <html>');
      return json(200, {
        issuer: state.issuer,
        authorization_endpoint: `${state.issuer}/authorize`,
        token_endpoint: `${state.issuer}/token`,
        jwks_uri: `${state.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = `code-${Math.random().toString(36).slice(2)}`;
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '', redirect: url.searchParams.get('redirect_uri') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      back.searchParams.set('iss', state.issuer);
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token') {
      const body = new URLSearchParams(
        await new Promise<string>((resolve) => {
          let data = '';
          req.on('data', (c) => (data += c));
          req.on('end', () => resolve(data));
        }),
      );
      if (state.mode === 'hang_token') return void hanging.add(res);
      if (state.mode === 'junk_token') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
      const grant = codes.get(body.get('code') ?? '');
      if (!grant || state.mode === 'other_client_code')
        return json(400, { error: 'invalid_grant', error_description: 'the code was issued to another client' });
      codes.delete(body.get('code')!);
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({
        nonce: state.mode === 'wrong_nonce' ? 'another-nonce' : grant.nonce,
        email: state.email,
        email_verified: state.emailVerified,
        name: state.name,
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(state.mode === 'wrong_iss' ? 'https://evil.example' : state.issuer)
        .setAudience(state.mode === 'wrong_aud' ? 'another-client' : clientId)
        .setSubject(state.sub)
        .setIssuedAt(state.mode === 'expired' ? now - 7200 : now)
        .setExpirationTime(state.mode === 'expired' ? now - 3600 : now + 300)
        .sign(state.mode === 'bad_sig' ? other.privateKey : privateKey);
      return json(200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 300, id_token: token });
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return state;
}

/** A browser without a browser for sign-ins through an upstream: a cookie jar, redirects followed by hand. */
export function upstreamJar(s: TestServer) {
  const cookies = new Map<string, string>();
  const go = async (url: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const own = url.startsWith(s.url);
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers ?? {}), ...(own ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}) },
    });
    if (own)
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
    return { status: res.status, location: res.headers.get('location'), text: await res.text() };
  };
  /** Presses "Continue with …": Gatehouse's redirect to the upstream, the upstream's back to the callback. */
  const begin = async (provider: string) => {
    await go(`${s.url}/signin`);
    const started = await go(`${s.url}/signin/provider/${provider}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
      body: new URLSearchParams({ csrf: cookies.get('gatehouse_csrf') ?? '' }).toString(),
    });
    return started;
  };
  const throughUpstream = async (provider: string) => {
    const started = await begin(provider);
    if (started.status !== 303) return { callback: null, started };
    const back = await go(started.location!);
    return { callback: back.location, started };
  };
  return { go, begin, throughUpstream, cookies };
}
