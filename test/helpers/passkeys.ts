/** Passkey tests' helpers: Chromium's virtual authenticator (DevTools' WebAuthn domain) and a server on http://localhost. */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import type { Test } from 'tap';
import { freePort } from './browser';
import { setSignup, startTestServer } from './server';
import type { Flags } from '../../src/config';
import type { Clock } from '../../src/clock';

export interface Credential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  privateKey: string;
  userHandle: string;
  signCount: number;
}

/** A browser context with a virtual platform authenticator (touch and PIN always succeed). */
export async function withAuthenticator(browser: Browser): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page, cdp, authenticatorId };
}

export async function credentialsOf(a: { cdp: CDPSession; authenticatorId: string }): Promise<Credential[]> {
  return (await a.cdp.send('WebAuthn.getCredentials', { authenticatorId: a.authenticatorId })).credentials as Credential[];
}

/** A server on http://localhost:<port> (an IP address cannot be an RP id), guest signup open. */
export async function passkeyServer(t: Test, flags: Flags = {}, options: { clock?: Clock } = {}) {
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://localhost:${port}`, ...flags }, undefined, options);
  await s.signup('admin@example.com');
  const adminToken = await s.signin('admin@example.com');
  await setSignup(s, adminToken, 2097057);
  return { s, adminToken, base: `http://localhost:${port}` };
}
