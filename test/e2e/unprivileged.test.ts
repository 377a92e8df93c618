// The packaged executable where operators run it: without a writable home, as another user, with
// a tampered addon cache, and with its stdout closed early (`serve | head -1`).
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { EXE, exeFolder, runExe } from '../helpers/exe';

const addon = (name: string) => fs.readFileSync(path.join(path.dirname(EXE), 'native', name));
const digestOf = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

t.test('no writable home: the addons go to a private temporary folder, removed at exit', async (t) => {
  const { dir, exe } = exeFolder(t);
  // A home that is a file refuses new folders even to root, as /nonexistent refuses them to nobody.
  const home = path.join(dir, 'home-is-a-file');
  fs.writeFileSync(home, '');
  const env = { HOME: home, PATH: '/nonexistent', LANG: 'C.UTF-8', TMPDIR: dir };
  const version = await runExe(exe, ['--version'], { env, cwd: dir });
  t.equal(version.code, 0, version.stderr);
  t.equal(version.stderr, '');
  // bootstrap-admin makes the store and hashes a password (bcrypt's addon); stats reads it.
  const boot = await runExe(exe, ['bootstrap-admin', '--data-dir', path.join(dir, 'data'), '--email', 'a@example.com', '--password-stdin'], {
    env,
    cwd: dir,
    stdin: 'a long enough password 1\n',
  });
  t.equal(boot.code, 0, boot.stderr);
  const stats = await runExe(exe, ['stats', '--data-dir', path.join(dir, 'data')], { env, cwd: dir });
  t.equal(stats.code, 0, stats.stderr);
  t.match(stats.stdout, /accounts/);
  t.same(
    fs.readdirSync(dir).filter((f) => f.startsWith('gatehouse-native-')),
    [],
    'the temporary folder is gone after exit',
  );
});

t.test('a cached addon is loaded only if its hash and owner are right; anything else is replaced', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const cache = path.join(dir, 'cache');
  const bcrypt = addon('bcrypt.glibc.node');
  const digest = digestOf(bcrypt);
  const slot = path.join(cache, 'gatehouse', 'native', digest.slice(0, 32));
  fs.mkdirSync(slot, { recursive: true, mode: 0o700 });
  const planted = path.join(slot, 'bcrypt.glibc.node');
  fs.writeFileSync(planted, 'not the addon: loading this would crash or run foreign code', { mode: 0o500 });

  // bootstrap-admin hashes a password: the first use of the addon.
  const r = await runExe(exe, ['bootstrap-admin', '--data-dir', path.join(dir, 'data'), '--email', 'a@example.com', '--password-stdin'], {
    env: { ...env, XDG_CACHE_HOME: cache },
    cwd: dir,
    stdin: 'a long enough password 1\n',
  });
  t.equal(r.code, 0, r.stderr);
  t.equal(digestOf(fs.readFileSync(planted)), digest, 'the planted file was replaced by the embedded addon');

  if (process.getuid?.() !== 0) return;
  // Right bytes, wrong owner: another user could swap them between our check and dlopen.
  fs.chownSync(planted, 65534, 65534);
  const again = await runExe(exe, ['user', 'create', '--data-dir', path.join(dir, 'data'), '--email', 'b@example.com', '--password-env', 'PW'], {
    env: { ...env, XDG_CACHE_HOME: cache, PW: 'another long password 2' },
    cwd: dir,
  });
  t.equal(again.code, 0, again.stderr);
  t.equal(fs.statSync(planted).uid, 0, 'rewritten as our own file');
});

t.test('as nobody (uid 65534), whose home does not exist', { skip: process.getuid?.() !== 0 && 'needs root to switch users' }, async (t) => {
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-nobody-'));
  t.teardown(() => fs.rmSync(shared, { recursive: true, force: true }));
  fs.chmodSync(shared, 0o755);
  const exe = path.join(shared, 'gatehouse');
  fs.copyFileSync(EXE, exe);
  fs.chmodSync(exe, 0o755);
  const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(exe, ['--version'], { uid: 65534, gid: 65534, cwd: '/', env: { HOME: '/nonexistent', PATH: '/nonexistent' } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
  t.equal(r.code, 0, r.out);
  t.match(r.out, /^\d+\.\d+\.\d+\n$/);
});

t.test('serve | head -1: a closed stdout ends the log, not the server', async (t) => {
  const { dir, exe, env } = exeFolder(t);
  const child = spawn(exe, ['serve', '--port', '0'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  t.teardown(() => void child.kill('SIGKILL'));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (m) resolve(m[1]);
    });
    setTimeout(() => reject(new Error(`no listening line: ${out}${stderr}`)), 20000);
  });
  child.stdout.destroy(); // what head does after its first line
  for (let i = 0; i < 20; i++) {
    const r = await fetch(`${url}/ping`);
    t.equal(r.status, 200, `request ${i} after stdout closed`);
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill('SIGTERM');
  t.equal(await exit, 0, 'stopped cleanly on SIGTERM');
  t.notMatch(stderr, /EPIPE|Error/);
});
