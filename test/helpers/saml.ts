// SAML service providers nobody here wrote (@node-saml/node-saml), and a browser's part of the
// HTTP bindings played with fetch and one session cookie: the redirect to /saml/sso, the hop to
// /saml/continue, and the form the page posts to the ACS URL.
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
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

/** The fenced block after `<!-- name: … -->` in docs/saml.md. */
export function samlDocBlock(name: string): string {
  const page = path.join(__dirname, '..', '..', 'docs', 'saml.md');
  const m = new RegExp(`<!-- ${name}:[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(fs.readFileSync(page, 'utf8'));
  if (!m) throw new Error(`docs/saml.md has no ${name} block`);
  return m[1]!;
}

/**
 * An ordinary user for a recipe written for one: the tests run as root, so the recipe's commands
 * run as `nobody` in a folder it owns (as the test's own user when that is not root).
 */
export function ordinaryUser(dir: string): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  fs.chownSync(dir, uid, gid);
  return { uid, gid };
}

/**
 * Runs a shell line of a recipe as written, in `dir`, as `user`; its output, or its failure with
 * what it said. Asynchronous: the line may ask the test's own server (curl), in this process.
 */
export async function shellLine(line: string, dir: string, user: { uid?: number; gid?: number }): Promise<string> {
  try {
    return (await promisify(execFile)('/bin/sh', ['-c', line], { cwd: dir, encoding: 'utf8', timeout: 30_000, ...user })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${line}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
  }
}

/**
 * A long-running line of a recipe (a server in the foreground), started as written in `dir` as
 * `user`, in a process group of its own (Apache signals its whole group when it stops), stopped
 * at the test's end; resolves once `port` on 127.0.0.1 accepts connections. `output()` is what it
 * printed. `env`: its environment (default the test's); `exec`: the line is one command the shell
 * becomes (not a `VAR=… command` line); `tries`: 50 ms waits for the port.
 */
export async function foregroundLine(
  t: Test,
  line: string,
  dir: string,
  user: { uid?: number; gid?: number },
  port: number,
  log: () => string = () => '',
  o: { env?: NodeJS.ProcessEnv; exec?: boolean; tries?: number } = {},
): Promise<{ output: () => string }> {
  let out = '';
  const command = o.exec === false ? line : `exec ${line}`;
  const child = spawn('/bin/sh', ['-c', command], { cwd: dir, env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...user });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(-child.pid!, 'SIGTERM');
      }),
  );
  for (let i = 0; i < (o.tries ?? 100); i++) {
    if (child.exitCode !== null) throw new Error(`${line} exited (${child.exitCode}): ${out}${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (open) return { output: () => out };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${line} did not listen on ${port}: ${out}${log()}`);
}
