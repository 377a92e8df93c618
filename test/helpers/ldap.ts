/** A Gatehouse with its LDAP listener on a free port, and OpenLDAP's command-line clients run against it. */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Test } from 'tap';
import { startLdap } from '../../src/ldap/server';
import { cli } from './cli';
import { PASSWORD, tempDir, withAdmin } from './server';

/** A self-signed certificate and its key (PEM), made by openssl for `subject`, for LDAPS and StartTLS. */
export function testCertificate(t: Test, subject = '/CN=localhost'): { cert: string; key: string } {
  const dir = tempDir(t);
  const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', subject, '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert: fs.readFileSync(cert, 'utf8'), key: fs.readFileSync(key, 'utf8') };
}

export const BASE = 'dc=example,dc=com';
export const person = (u: string) => `uid=${u},ou=people,${BASE}`;

export async function ldapServer(t: Test, o: { readers?: string[] } = {}) {
  const s = await withAdmin(t);
  const ldap = await startLdap(
    s.core,
    { host: '127.0.0.1', port: 0, tlsPort: null, tls: null, baseDn: BASE, readers: o.readers ?? ['ldap-readers'], allowInsecureBind: false },
    s.core.logger,
  );
  t.teardown(() => ldap.close());
  const port = ldap.port!;
  const url = `ldap://127.0.0.1:${port}`;
  const make = (email: string) => cli(s.dataDir, ['user', 'create', '--email', email, '--password-env', 'PW'], { env: { PW: PASSWORD } });
  return { s, ldap, port, url, make };
}

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs an OpenLDAP client (ldapsearch, ldapwhoami, ldapmodify): its exit code is the LDAP result code. */
export function ldapTool(tool: string, args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(tool, args, { timeout: 20_000, env: { PATH: process.env.PATH, LDAPTLS_REQCERT: 'never' } }, (err, out, errOut) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: String(out), err: String(errOut) }),
    );
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

/** Entries of ldapsearch's LDIF output: DN → attribute → values. */
export function ldif(text: string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | null = null;
  for (const line of text.replace(/\n /g, '').split('\n')) {
    const m = /^([A-Za-z0-9.;-]+):(:?) ?(.*)$/.exec(line);
    if (!m || line.startsWith('#')) continue;
    const value = m[2] ? Buffer.from(m[3], 'base64').toString('utf8') : m[3];
    if (m[1] === 'dn') {
      current = new Map();
      out.set(value, current);
    } else if (current) current.set(m[1], [...(current.get(m[1]) ?? []), value]);
  }
  return out;
}

/** Sends bytes (from `localAddress`) and collects what comes back until the server closes (or `ms` pass). */
export function exchange(port: number, bytes: Buffer, ms = 5000, localAddress?: string): Promise<{ closed: boolean; got: Buffer }> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (socket.destroy(), resolve({ closed: false, got: Buffer.concat(chunks) })), ms);
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => (clearTimeout(timer), resolve({ closed: true, got: Buffer.concat(chunks) })));
    socket.on('error', () => undefined);
    socket.write(bytes);
  });
}
