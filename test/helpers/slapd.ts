/**
 * Debian's OpenLDAP server (slapd) on free ports, as a directory to sync from: a throwaway mdb
 * database under a temp folder, the standard schemas, an administrator DN, optionally LDAPS and
 * StartTLS with a certificate made by openssl. Entries are added with OpenLDAP's own ldapadd and
 * passwords hashed by its slappasswd.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { freePort } from './browser';
import { tempDir } from './server';

const run = promisify(execFile);

export const SUFFIX = 'dc=example,dc=org';
export const ADMIN_DN = `cn=admin,${SUFFIX}`;
export const ADMIN_PASSWORD = 'slapd-admin-secret';

export interface Slapd {
  url: string;
  /** ldaps:// on its own port (when made with tls). */
  ldapsUrl: string | null;
  /** The certificate (PEM) its TLS uses, to trust with --ca-file. */
  caFile: string | null;
  /** Adds or changes entries (LDIF) with ldapadd / ldapmodify. */
  add(ldif: string): Promise<void>;
  modify(ldif: string): Promise<void>;
  remove(dn: string): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A person entry (inetOrgPerson) with a password hashed by slappasswd. */
export function personLdif(uid: string, o: { cn?: string; mail?: string; password?: string; ou?: string } = {}): string {
  const lines = [
    `dn: uid=${uid},ou=${o.ou ?? 'people'},${SUFFIX}`,
    'objectClass: inetOrgPerson',
    `uid: ${uid}`,
    `cn: ${o.cn ?? uid}`,
    `sn: ${uid}`,
    `mail: ${o.mail ?? `${uid}@example.org`}`,
  ];
  if (o.password) lines.push(`userPassword: ${execFileSync('slappasswd', ['-s', o.password]).toString().trim()}`);
  return lines.join('\n') + '\n\n';
}

export function groupLdif(cn: string, members: string[]): string {
  return [`dn: cn=${cn},ou=groups,${SUFFIX}`, 'objectClass: groupOfNames', `cn: ${cn}`, ...members.map((m) => `member: ${m}`)].join('\n') + '\n\n';
}

export const personDn = (uid: string) => `uid=${uid},ou=people,${SUFFIX}`;
export const groupDn = (cn: string) => `cn=${cn},ou=groups,${SUFFIX}`;

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startSlapd(t: Test, o: { tls?: { subjectAltName: string } } = {}): Promise<Slapd> {
  const dir = tempDir(t, 'slapd-');
  fs.mkdirSync(path.join(dir, 'db'));
  const port = await freePort();
  const tlsPort = o.tls ? await freePort() : null;
  let caFile: string | null = null;
  const tlsLines: string[] = [];
  if (o.tls) {
    const [cert, key] = [path.join(dir, 'cert.pem'), path.join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=directory',
        '-addext',
        `subjectAltName=${o.tls.subjectAltName}`,
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    fs.chmodSync(key, 0o644);
    caFile = cert;
    tlsLines.push(`TLSCertificateFile ${cert}`, `TLSCertificateKeyFile ${key}`);
  }
  const conf = path.join(dir, 'slapd.conf');
  fs.writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson', 'nis'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${path.join(dir, 'slapd.pid')}`,
      ...tlsLines,
      'sizelimit unlimited',
      'database mdb',
      'maxsize 104857600',
      `suffix "${SUFFIX}"`,
      `rootdn "${ADMIN_DN}"`,
      `rootpw ${ADMIN_PASSWORD}`,
      `directory ${path.join(dir, 'db')}`,
      '',
    ].join('\n'),
  );
  const urls = [`ldap://127.0.0.1:${port}/`, ...(tlsPort ? [`ldaps://127.0.0.1:${tlsPort}/`] : [])].join(' ');
  let child: ReturnType<typeof spawn> | null = null;
  const start = async () => {
    child = spawn('slapd', ['-f', conf, '-h', urls, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    for (let i = 0; i < 100 && !(await listening(port)); i++) await new Promise((r) => setTimeout(r, 50));
    if (!(await listening(port))) throw new Error(`slapd did not start: ${stderr}`);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  await start();
  t.teardown(stop);
  const url = `ldap://127.0.0.1:${port}`;
  const tool = async (cmd: string, args: string[], input: string) => {
    const p = run(cmd, ['-x', '-H', url, '-D', ADMIN_DN, '-w', ADMIN_PASSWORD, ...args]);
    p.child.stdin!.on('error', () => undefined); // reason: ldapdelete reads no input and may have exited
    p.child.stdin!.end(input === '' ? undefined : input);
    await p;
  };
  const slapd: Slapd = {
    url,
    ldapsUrl: tlsPort ? `ldaps://127.0.0.1:${tlsPort}` : null,
    caFile,
    add: (ldif) => tool('ldapadd', [], ldif),
    modify: (ldif) => tool('ldapmodify', [], ldif),
    remove: (dn) => tool('ldapdelete', [dn], ''),
    stop,
    start,
  };
  await slapd.add(
    [
      `dn: ${SUFFIX}`,
      'objectClass: dcObject',
      'objectClass: organization',
      'o: Example',
      'dc: example',
      '',
      `dn: ou=people,${SUFFIX}`,
      'objectClass: organizationalUnit',
      'ou: people',
      '',
      `dn: ou=groups,${SUFFIX}`,
      'objectClass: organizationalUnit',
      'ou: groups',
      '',
      '',
    ].join('\n'),
  );
  return slapd;
}
