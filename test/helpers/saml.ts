// SAML service providers nobody here wrote (@node-saml/node-saml), and a browser's part of the
// HTTP bindings played with fetch and one session cookie: the redirect to /saml/sso, the hop to
// /saml/continue, and the form the page posts to the ACS URL.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { SAML, type SamlConfig } from '@node-saml/node-saml';
import { cli } from './cli';
import { type TestServer, tempDir } from './server';

export const SP_ENTITY = 'https://app.example.test/saml';
export const ACS = 'http://localhost:4999/saml/acs';

/** The IdP's signing certificates (base64 DER) as its metadata lists them: current first. */
export async function idpCerts(s: Pick<TestServer, 'url'>): Promise<string[]> {
  const xml = await (await fetch(`${s.url}/saml/metadata`)).text();
  return [...xml.matchAll(/<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/g)].map((m) => m[1]!);
}

/** A key and self-signed certificate made by openssl, for an SP that signs its requests. */
export function spKeyPair(t: Test): { key: string; cert: string } {
  const dir = tempDir(t, 'gatehouse-sp-key-');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=sp', '-days', '2', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem')],
    {
      stdio: 'ignore',
    },
  );
  return { key: fs.readFileSync(path.join(dir, 'k.pem'), 'utf8'), cert: fs.readFileSync(path.join(dir, 'c.pem'), 'utf8') };
}

/** A node-saml SP for this server; `signing` makes it sign its AuthnRequests. */
export async function nodeSamlSp(
  s: TestServer,
  o: { signing?: { key: string; cert: string }; entity?: string; acs?: string; extra?: Partial<SamlConfig> } = {},
) {
  const config: SamlConfig = {
    callbackUrl: o.acs ?? ACS,
    entryPoint: `${s.config.publicUrl}/saml/sso`,
    issuer: o.entity ?? SP_ENTITY,
    audience: o.entity ?? SP_ENTITY,
    idpCert: await idpCerts(s),
    idpIssuer: `${s.config.publicUrl}/saml/metadata`,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: true,
    validateInResponseTo: 'always' as never,
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    signatureAlgorithm: 'sha256',
    ...(o.signing ? { privateKey: o.signing.key, publicCert: o.signing.cert } : {}),
    ...o.extra,
  } as SamlConfig;
  const saml = new SAML(config);
  const metadata = saml.generateServiceProviderMetadata(null, o.signing?.cert ?? null);
  return { saml, metadata, config };
}

/** Registers SP metadata with `saml sp add --metadata FILE` (extra flags after). */
export async function addSp(t: Test, s: TestServer, metadata: string, ...flags: string[]) {
  const file = path.join(tempDir(t, 'gatehouse-sp-md-'), 'sp.xml');
  fs.writeFileSync(file, metadata);
  const r = await cli(s.dataDir, ['--json', 'saml', 'sp', 'add', '--metadata', file, ...flags]);
  if (r.code !== 0) throw new Error(`saml sp add failed: ${r.err}`);
  return r.json as { id: string; entity_id: string };
}

/** The page session cookie of a signed-in account (as the sign-in page would set it). */
export async function sessionCookie(s: TestServer, email: string, password?: string): Promise<string> {
  const r = await s.action('user_account', 'signin', { email, password: password ?? 'correct horse battery staple' });
  const items = r.body as Array<{ ResponseType: string; Attributes: { key?: string; value?: string } }>;
  const get = (k: string) => items.find((i) => i.ResponseType === 'client.store.set' && i.Attributes.key === k)?.Attributes.value;
  if (!get('token')) throw new Error(`signin failed: ${r.text}`);
  return `gatehouse_session=${get('token')}~${get('refresh_token')}`;
}

export interface Posted {
  /** Where the page posts its form (the ACS URL), or null when the page is something else. */
  action: string | null;
  fields: Record<string, string>;
  status: number;
  html: string;
  /** The last URL visited. */
  url: string;
}

const decode = (v: string) =>
  v
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Reads the autopost form of a page (its action and hidden fields). */
export function formOf(html: string): { action: string | null; fields: Record<string, string> } {
  const form = /<form method="post" action="([^"]*)" data-autopost>([\s\S]*?)<\/form>/.exec(html);
  if (!form) return { action: null, fields: {} };
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)" ?\/?>/g)) fields[decode(m[1]!)] = decode(m[2]!);
  return { action: decode(form[1]!), fields };
}

/** Follows a browser's way from `start` (redirects, the Refresh hop) with `cookie`, to the page that answers. */
export async function browse(start: string | { url: string; form: Record<string, string> }, cookie?: string): Promise<Posted> {
  let url = typeof start === 'string' ? start : start.url;
  let init: RequestInit =
    typeof start === 'string'
      ? {}
      : { method: 'POST', body: new URLSearchParams(start.form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  for (let hops = 0; hops < 10; hops++) {
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    const location = res.headers.get('location') ?? /^0; url=(.*)$/.exec(res.headers.get('refresh') ?? '')?.[1];
    if (location && new URL(location, url).origin === new URL(url).origin) {
      await res.arrayBuffer();
      url = new URL(location, url).href;
      init = {};
      continue;
    }
    const html = await res.text();
    return { ...formOf(html), status: res.status, html, url };
  }
  throw new Error('too many redirects');
}
