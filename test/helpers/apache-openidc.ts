/**
 * A relying party nobody in this project wrote: Debian's Apache httpd with mod_auth_openidc
 * (libapache2-mod-auth-openidc, installed by .ci/run), on a free port with its own ServerRoot in
 * a temp folder, registered with `gatehouse client add` as a confidential first-party client.
 * Its /protected/ page is an SSI page that prints what mod_auth_openidc tells the app (REMOTE_USER
 * is the email, OIDC_CLAIM_* the ID token's claims); OIDCRedirectURI is /protected/redirect_uri,
 * and with `backchannel` the client's back-channel logout URI is that URI with ?logout=backchannel.
 *
 * mod_auth_openidc answers 401 to what looks like a script (Node's fetch sends Sec-Fetch-Mode:
 * cors), so a page is read with node:http (`visit`) carrying the browser's cookies.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import type { Test } from 'tap';
import { freePort } from './browser';
import { cli } from './cli';
import { startApache } from './proxies';
import { foregroundLine } from './saml';
import type { TestServer } from './server';

export interface OidcApache {
  /** http://localhost:<port> */
  url: string;
  port: number;
  /** Where a person's page is: `${url}/protected/`. */
  page: string;
  redirectUri: string;
  client: { client_id: string; client_secret: string };
  /** Apache's folder (httpd.conf, error.log, access.log). */
  dir: string;
  /** The end of Apache's error log and access log, for failure messages. */
  logs(): string;
  /** The requests Apache answered, one `METHOD path status` a line. */
  accessLog(): string[];
}

export interface OidcApacheOptions {
  /** Register the client with --backchannel-logout-uri <redirect URI>?logout=backchannel. */
  backchannel?: boolean;
  /** Register `<url>/` with --post-logout-redirect-uri (for mod_auth_openidc's ?logout=<url>/). */
  postLogout?: boolean;
  /** More `client add` flags. */
  clientFlags?: string[];
  /** OIDCScope (default "openid email"). */
  scope?: string;
}

/** Registers the client with `gatehouse client add` (in-process, on the server's store) and starts Apache. */
export async function startOidcApache(t: Test, s: Pick<TestServer, 'dataDir' | 'config'>, o: OidcApacheOptions = {}): Promise<OidcApache> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const redirectUri = `${url}/protected/redirect_uri`;
  const added = await cli(s.dataDir, [
    '--json',
    // The logout URI is on this computer: an internal address, allowed as the server allows it.
    '--webhook-allow-private',
    'loopback',
    'client',
    'add',
    '--name',
    'Wiki',
    '--first-party',
    '--redirect-uri',
    redirectUri,
    ...(o.backchannel ? ['--backchannel-logout-uri', `${redirectUri}?logout=backchannel`] : []),
    ...(o.postLogout ? ['--post-logout-redirect-uri', `${url}/`] : []),
    ...(o.clientFlags ?? []),
  ]);
  if (added.code !== 0) throw new Error(`client add failed: ${added.err}`);
  const client = added.json as { client_id: string; client_secret: string };

  const dir = await startApache(t, port, ['auth_openidc', 'include', 'mime', 'dir'], (dir) => {
    fs.mkdirSync(path.join(dir, 'www', 'protected'), { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'www', 'protected', 'index.html'), '<pre><!--#printenv --></pre>\n', { mode: 0o644 });
    return `DefaultRuntimeDir ${dir}
TypesConfig /etc/mime.types
DirectoryIndex index.html
LogLevel warn auth_openidc:info
CustomLog ${dir}/access.log "%m %U%q %>s"
OIDCProviderMetadataURL ${s.config.publicUrl}/.well-known/openid-configuration
OIDCClientID ${client.client_id}
OIDCClientSecret ${client.client_secret}
OIDCRedirectURI ${redirectUri}
OIDCCryptoPassphrase ${Buffer.from(client.client_secret).toString('hex').slice(0, 32)}
OIDCScope "${o.scope ?? 'openid email'}"
OIDCRemoteUserClaim email
# Cookies do not tell ports apart: two of these on localhost each keep their own session cookie.
OIDCCookie gh_openidc_${port}
<Location /protected>
  AuthType openid-connect
  Require valid-user
  Options +Includes
  SetOutputFilter INCLUDES
</Location>
`;
  });
  const read = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : '');
  return {
    url,
    port,
    page: `${url}/protected/`,
    redirectUri,
    client,
    dir,
    logs: () => `error.log:\n${read('error.log').slice(-3000)}\naccess.log:\n${read('access.log').slice(-2000)}`,
    accessLog: () => read('access.log').split('\n').filter(Boolean),
  };
}

export interface Visit {
  status: number;
  location: string | null;
  body: string;
}

/**
 * One GET as a browser's navigation would send it (Accept: text/html, no Sec-Fetch-Mode: cors),
 * with the cookies `context` holds for the URL; redirects are not followed.
 */
export async function visit(target: string, context?: BrowserContext): Promise<Visit> {
  const cookie = context ? (await context.cookies(target)).map((c) => `${c.name}=${c.value}`).join('; ') : '';
  return new Promise((resolve, reject) => {
    const req = http.get(target, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location ?? null, body }));
    });
    req.on('error', reject);
  });
}

/** Whom Apache's page says is signed in (REMOTE_USER), or null when it sends the browser to sign in. */
export async function signedInAs(apache: OidcApache, context: BrowserContext): Promise<string | null> {
  const r = await visit(apache.page, context);
  if (r.status === 200) return /^REMOTE_USER=(.*)$/m.exec(r.body)?.[1] ?? '';
  if (r.status === 302) return null;
  throw new Error(`Apache answered ${r.status}: ${r.body.slice(0, 300)}\n${apache.logs()}`);
}

/** Polls Apache until its page no longer serves a person (the back-channel delivery arrived), up to `ms`. */
export async function waitSignedOut(apache: OidcApache, context: BrowserContext, ms = 60_000): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if ((await signedInAs(apache, context)) === null) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const APPS_DOC = path.join(__dirname, '..', '..', 'docs', 'oidc-apps.md');

/** The fenced block after `<!-- name: … -->` in docs/oidc-apps.md. */
export function appsDocBlock(name: string): string {
  const m = new RegExp(`<!-- ${name}:[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(fs.readFileSync(APPS_DOC, 'utf8'));
  if (!m) throw new Error(`docs/oidc-apps.md has no ${name} block`);
  return m[1]!;
}

/** A recipe's shell block as the shell reads it: continued lines joined, comments after a command dropped, blank lines left out. */
export function recipeLines(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** A shell line's words as /bin/sh splits them (single and double quotes; no expansion). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

/**
 * Runs a recipe's `gatehouse …` line through the CLI in-process, against the test's store: the
 * password piped in by `printf '…' |`, and the output written to the file named by `> file` in
 * `dir` (owned by `user`, as the shell would have made it). Its exit code and what it said.
 */
export async function gatehouseLine(dataDir: string, line: string, dir: string, user: { uid?: number; gid?: number }): Promise<{ code: number; err: string }> {
  const m = /^(?:printf '([^']*)' \| )?gatehouse (.*?)(?: > (\S+))?$/.exec(line);
  if (!m) throw new Error(`not a gatehouse line: ${line}`);
  const r = await cli(dataDir, shellWords(m[2]!), { stdin: m[1] });
  if (m[3]) {
    const file = path.join(dir, m[3]);
    fs.writeFileSync(file, r.out);
    if (user.uid !== undefined) fs.chownSync(file, user.uid, user.gid!);
  }
  return { code: r.code, err: r.err };
}

/**
 * A recipe's long-running line (`VAR=… node app.mjs`), run by /bin/sh in `dir` as `user`, in a
 * process group of its own (stopped with the test), with the test's own Node first on PATH;
 * resolves once `port` on 127.0.0.1 accepts connections. `output()` is what it printed.
 */
export function startLine(t: Test, line: string, dir: string, user: { uid?: number; gid?: number }, port: number): Promise<{ output: () => string }> {
  const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  return foregroundLine(t, line, dir, user, port, undefined, { env, exec: false, tries: 200 });
}
