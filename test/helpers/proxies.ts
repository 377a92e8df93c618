/**
 * Debian's nginx, Caddy and Apache httpd, started by the tests on free ports (installed by
 * .ci/run when missing), with the configuration blocks the docs show, and a small backend that
 * answers with what it received.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Test } from 'tap';
import { tempDir } from './server';

export const DOC = path.join(__dirname, '..', '..', 'docs', 'forward-auth.md');

/** The fenced block after `<!-- name: … -->` in docs/forward-auth.md (or another page of docs/). */
export function docBlock(name: 'nginx' | 'caddy' | 'local-shell' | 'nginx-local' | 'caddy-local' | 'mellon', page = DOC): string {
  const doc = fs.readFileSync(page, 'utf8');
  const m = new RegExp(`<!-- ${name}:[^\\n]*-->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!m) throw new Error(`${path.basename(page)} has no ${name} block`);
  return m[1];
}

/** A backend that answers every request with JSON: the method, path and headers it got. */
export async function startEcho(t: Test): Promise<number> {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`the proxy exited (${child.exitCode}): ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the proxy did not listen on ${port}: ${log()}`);
}

/** `detached`: a process group of its own, for a server that signals its whole group when it stops (Apache). */
function run(t: Test, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, detached = false): { child: ChildProcess; log: () => string } {
  let out = '';
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  );
  return { child, log: () => out };
}

/** nginx with one server block, as root (`user root;`), in the foreground, its temp paths in a fresh folder. */
export async function startNginx(t: Test, serverBlock: string, port: number): Promise<void> {
  const dir = tempDir(t, 'gh-nginx-');
  const conf = `user root;
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${serverBlock}
}
`;
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const { child, log } = run(t, 'nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')]);
  await waitForPort(port, child, () => log() + (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : ''));
}

/** A whole nginx.conf as docs/forward-auth.md's recipe runs it: `nginx -p "$PWD" -e stderr -c nginx.conf` in a fresh folder. */
export async function startNginxFile(t: Test, conf: string, port: number): Promise<void> {
  const dir = tempDir(t, 'gh-nginx-local-');
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const { child, log } = run(t, 'nginx', ['-p', dir, '-e', 'stderr', '-c', 'nginx.conf']);
  await waitForPort(port, child, log);
}

/** A whole Caddyfile as the recipe runs it: `caddy run --config Caddyfile` (HOME and XDG folders in a fresh folder). */
export async function startCaddyFile(t: Test, caddyfile: string, port: number): Promise<void> {
  const dir = tempDir(t, 'gh-caddy-local-');
  fs.writeFileSync(path.join(dir, 'Caddyfile'), caddyfile);
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') };
  const { child, log } = run(t, 'caddy', ['run', '--config', path.join(dir, 'Caddyfile')], env);
  await waitForPort(port, child, log);
}

/** Caddy with one site block (admin endpoint off, no automatic https), HOME and XDG folders in a fresh folder. */
export async function startCaddy(t: Test, siteBlock: string, port: number): Promise<void> {
  const dir = tempDir(t, 'gh-caddy-');
  fs.writeFileSync(path.join(dir, 'Caddyfile'), `{\n  admin off\n  auto_https off\n}\n${siteBlock}\n`);
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') };
  const { child, log } = run(t, 'caddy', ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], env);
  await waitForPort(port, child, log);
}

/** Apache modules Debian ships, by file (mod_X.so → X_module unless named otherwise). */
const APACHE_MODULES = '/usr/lib/apache2/modules';

/**
 * Apache httpd in the foreground (`apache2 -DFOREGROUND -f conf`), one process (prefork with
 * one server), listening on `port`, with `modules` loaded and `body` as the rest of the
 * configuration; its DocumentRoot is `<dir>/www`, readable by the user it drops to.
 */
export async function startApache(t: Test, port: number, modules: string[], body: (dir: string) => string): Promise<string> {
  const dir = tempDir(t, 'gh-apache-');
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'www'), { mode: 0o755 });
  const load = ['mpm_prefork', 'authn_core', 'authz_core', 'authz_user', 'auth_basic', ...modules]
    .map((m) => `LoadModule ${m}_module ${APACHE_MODULES}/mod_${m}.so`)
    .join('\n');
  const conf = `ServerRoot ${dir}
ServerName 127.0.0.1
Listen 127.0.0.1:${port}
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn
${load}
User nobody
Group nogroup
StartServers 1
MinSpareServers 1
MaxSpareServers 1
DocumentRoot ${dir}/www
${body(dir)}
`;
  fs.writeFileSync(path.join(dir, 'httpd.conf'), conf);
  // Apache stops by signalling its process group: it gets one of its own, not the test's.
  const { child, log } = run(t, '/usr/sbin/apache2', ['-DFOREGROUND', '-f', path.join(dir, 'httpd.conf')], process.env, true);
  const errors = () => log() + (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  await waitForPort(port, child, errors);
  return dir;
}
