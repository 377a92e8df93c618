/**
 * What the hosts recipes' tests share (docs/hosts.md): the packaged server with its directory
 * over StartTLS (a test certificate for 127.0.0.1), the doc's blocks, and its `gatehouse` lines run
 * by bash as written, with the executable first on PATH.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { freePort } from '../helpers/browser';
import { exeFolder, runExe, serveExe, type ServeHandle } from '../helpers/exe';

export const DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'hosts.md'), 'utf8');
export const ADMIN_PW = 'a long admin password';
export const ANN_PW = 'correct horse battery staple';

/** The fenced block after `<!-- name: … -->`. */
export function block(name: string): string {
  const m = new RegExp(`<!-- ${name}:[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(DOC);
  if (!m) throw new Error(`docs/hosts.md has no ${name} block`);
  return m[1];
}

export interface Host {
  dir: string;
  exe: string;
  env: NodeJS.ProcessEnv;
  port: number;
  cert: string;
  /** Runs one shell line (bash, the executable first on PATH, the store's data dir in the environment). */
  sh(line: string, stdin?: string): Promise<{ code: number; out: string; err: string }>;
  gatehouse(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
  server?: ServeHandle;
}

/** A folder with the executable, a store with an administrator, ann and bo (in no group yet), and a certificate for 127.0.0.1. */
export async function host(t: Test): Promise<Host> {
  const { dir, exe, env: base } = exeFolder(t);
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.renameSync(exe, path.join(bin, 'gatehouse'));
  const env = { ...base, PATH: `${bin}:/usr/bin:/bin:/usr/sbin:/sbin`, GATEHOUSE_DATA_DIR: path.join(dir, 'data') };
  const cert = path.join(dir, 'ldap.pem');
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
      '/CN=vm',
      '-addext',
      'subjectAltName=DNS:vm,IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'ldap-key.pem'),
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const gatehouse = (args: string[], stdin?: string) => runExe(path.join(bin, 'gatehouse'), args, { env, cwd: dir, stdin });
  const sh = (line: string, stdin?: string) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const child = execFile('bash', ['-c', line], { env, cwd: dir, timeout: 60_000 }, (err, out, errOut) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: String(out), err: String(errOut) }),
      );
      child.stdin!.end(stdin ?? '');
    });
  for (const args of [
    ['bootstrap-admin', '--email', 'root@example.com', '--password-stdin'],
    ['user', 'create', '--email', 'ann@example.com', '--password-stdin'],
    ['user', 'create', '--email', 'bo@example.com', '--password-stdin'],
  ]) {
    const made = await gatehouse(args, args[0] === 'user' ? ANN_PW : ADMIN_PW);
    if (made.code !== 0) throw new Error(made.stderr);
  }
  return { dir, exe: path.join(bin, 'gatehouse'), env, port: await freePort(), cert, sh, gatehouse };
}

/** Runs the recipe's `gatehouse …` lines (the serve line started on the test's ports and files); the reader's app password. */
export async function setUp(t: Test, h: Host, marker: string): Promise<{ readerPassword: string }> {
  let readerPassword = '';
  for (const line of block(marker)
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))) {
    if (line.startsWith('gatehouse serve ')) {
      const args = line
        .slice('gatehouse serve '.length)
        .replace('--ldap-port 3890', `--ldap-port ${h.port}`)
        .replace('/etc/gatehouse/ldap.pem', h.cert)
        .replace('/etc/gatehouse/ldap-key.pem', path.join(h.dir, 'ldap-key.pem'))
        .split(' ');
      h.server = await serveExe(t, h.exe, ['--bcrypt-cost', '4', ...args], { env: h.env, cwd: h.dir });
      continue;
    }
    const r = await h.sh(line);
    t.equal(r.code, 0, `${line}: ${r.err}`);
    const secret = /^password:\s+(\S+)$/m.exec(r.out);
    if (line.includes('app-password add host-reader@example.com') && secret) readerPassword = secret[1];
  }
  t.ok(readerPassword, "the reader's app password, printed once");
  return { readerPassword };
}
