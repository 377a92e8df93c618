/**
 * A relying party nobody here wrote (openid-client) against Gatehouse's OpenID Connect provider,
 * and the browser's half of a sign-in in Chromium. Shared by the flow tests and the attack tests.
 */
import * as oidc from 'openid-client';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import type { Clock } from '../../src/clock';
import { cli } from './cli';
import { PASSWORD, setSignup, startTestServer, type TestServer } from './server';
import { freePort } from './browser';

export const APP = 'http://localhost:3999';
export const REDIRECT = `${APP}/callback`;

export const addClient = (s: Pick<TestServer, 'dataDir'>, ...args: string[]) => addClientFor(s, REDIRECT, ...args);

export async function addClientFor(
  s: Pick<TestServer, 'dataDir'>,
  redirect: string,
  ...args: string[]
): Promise<{ client_id: string; client_secret?: string }> {
  const r = await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', redirect, ...args]);
  if (r.code !== 0) throw new Error(r.err);
  return r.json;
}

/** The relying party's view of Gatehouse, from its discovery document (http allowed: a test). */
export const relyingParty = (s: Pick<TestServer, 'config'>, client: { client_id: string; client_secret?: string }) =>
  oidc.discovery(new URL(s.config.publicUrl), client.client_id, client.client_secret, client.client_secret ? undefined : oidc.None(), {
    execute: [oidc.allowInsecureRequests],
  });

/** An authorization request with a fresh PKCE pair; offline_access asks with prompt=consent, as the spec wants. */
export async function authorizationRequest(config: oidc.Configuration, scope = 'openid', state = 'st', extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(scope.includes('offline_access') ? { prompt: 'consent' } : {}),
    ...extra,
  });
  return { url, verifier };
}

/**
 * A real app for the browser to come back to: an HTTP server on a free port whose callback
 * records where the browser landed (`last()`). Requests routed by the browser would miss the
 * redirects Chromium follows on its own, so nothing here is intercepted.
 */
export async function startApp(t: Test): Promise<{ redirect: string; last: () => URL | undefined }> {
  let last: URL | undefined;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://localhost:${(server.address() as AddressInfo).port}`);
    if (url.pathname !== '/callback') return void res.writeHead(404).end(); // the browser's /favicon.ico
    last = url;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the app');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { redirect: `http://localhost:${(server.address() as AddressInfo).port}/callback`, last: () => last };
}

/** Fills Gatehouse's sign-in form on `page`. */
export async function fillSignin(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page
    .getByLabel('Email', { exact: true })
    .fill(email)
    .catch(async (err) => {
      // Say where the browser is and what it shows, not only that the form is missing.
      throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.replace(/\s+/g, ' ').slice(0, 300)}`);
    });
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Waits for the browser to reach the app, with what the page showed if it does not. */
export async function reachApp(page: Page): Promise<void> {
  await page
    .waitForURL((url) => url.pathname === '/callback', { timeout: 5000 })
    .catch(async (err) => {
      throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.slice(0, 300)}`);
    });
}

/**
 * A provider on its own public URL (a free port, named before it listens), with an administrator,
 * guest signup open, and these accounts signed up.
 */
export async function providerWith(t: Test, ...emails: string[]): Promise<TestServer> {
  return providerOn(t, {}, ...emails);
}

/** providerWith, on a clock of the test's choosing. */
export async function providerOn(t: Test, options: { clock?: Clock }, ...emails: string[]): Promise<TestServer> {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://127.0.0.1:${port}` }, undefined, options);
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  for (const email of emails) await s.signup(email);
  return s;
}
