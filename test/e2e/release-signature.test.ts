// A release's SHA256SUMS is signed (scripts/release.mjs --sign-key, or GATEHOUSE_RELEASE_SIGNING_KEY)
// with `ssh-keygen -Y sign`, and a user's check works as docs/operations.md and the QUICKSTART
// write it: their commands run as written, with a throwaway key generated here in place of the
// project's (whose private half the tests never see). A changed SHA256SUMS fails the check; a
// release made without a key says it is unsigned and leaves no signature; the public key in the
// repository parses and is the one the docs print.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { EXE } from '../helpers/exe';
import { tempDir } from '../helpers/server';

const ROOT = path.resolve(__dirname, '..', '..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const NAME = `gatehouse-${PKG.version}-linux-x64`;
const SIGNERS = fs.readFileSync(path.join(ROOT, 'scripts', 'release', 'allowed_signers'), 'utf8').trim();
const PROJECT_KEY = SIGNERS.split(/\s+/).at(-1)!;

function release(out: string, o: { key?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'release.mjs'), '--package-only', '--out', out, ...(o.key ? ['--sign-key', o.key] : [])], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { ...process.env, GATEHOUSE_RELEASE_SIGNING_KEY: '', ...o.env },
  });
  if (r.status !== 0) throw new Error(`release failed: ${r.stdout}${r.stderr}`);
  return r;
}

/** A throwaway Ed25519 key pair: [private key file, public key "ssh-ed25519 AAAA…"]. */
function keyPair(dir: string): [string, string] {
  const key = path.join(dir, 'key');
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'throwaway', '-f', key], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  return [key, fs.readFileSync(`${key}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')];
}

/** The commands of a block up to and including `sha256sum -c SHA256SUMS`: the checks, not the install. */
function checks(block: string): string {
  const lines = block
    .split('\n')
    .map((l) => l.replace(/^ {4}/, '').replace(/\s+#.*$/, ''))
    .filter((l) => l.trim() && !l.startsWith('cd '));
  const end = lines.findIndex((l) => l.startsWith('sha256sum -c'));
  if (end < 0) throw new Error(`no sha256sum -c in:\n${block}`);
  return lines.slice(0, end + 1).join('\n');
}

// Run as written: the recipe's own `set -e` must stop it at a failed check (nothing prepended).
const run = (script: string, cwd: string) => spawnSync('bash', ['-c', script], { cwd, encoding: 'utf8' });

t.test('the committed public key parses, is the allowed_signers key, and the docs print both', async (t) => {
  const pub = path.join(ROOT, 'scripts', 'release', 'gatehouse-release.pub');
  const l = spawnSync('ssh-keygen', ['-l', '-f', pub], { encoding: 'utf8' });
  t.equal(l.status, 0, l.stderr);
  t.match(l.stdout, /^256 SHA256:\S+ releases@gatehouse \(ED25519\)$/m);
  t.match(SIGNERS, /^releases@gatehouse namespaces="gatehouse-release" ssh-ed25519 \S+$/, 'an allowed_signers line: identity, namespace, key');
  t.equal(fs.readFileSync(pub, 'utf8').trim().split(/\s+/)[1], PROJECT_KEY, 'the same key');
  t.notOk(fs.readFileSync(pub, 'utf8').includes('PRIVATE'), 'only the public half is committed');
  const ops = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
  t.ok(ops.includes(`\n${SIGNERS}\n`), 'docs/operations.md prints the line');
  t.ok(ops.includes(/SHA256:\S+/.exec(l.stdout)![0]), 'and its fingerprint');
});

t.test('signed with --sign-key or the environment, the docs and the QUICKSTART checks pass as written; a changed SHA256SUMS fails', async (t) => {
  if (!fs.existsSync(EXE)) throw new Error('dist/gatehouse is missing: run npm run build (npm test does)');
  const tmp = tempDir(t);
  const [key, pub] = keyPair(tmp);
  const dir = path.join(tmp, 'release');
  const signed = release(dir, { key });
  t.match(signed.stdout, /SHA256SUMS signed \(SHA256SUMS\.sig\) by 256 SHA256:\S+ throwaway \(ED25519\)/);
  t.match(signed.stderr, /not the project's/, 'a key other than the committed one is pointed out');
  t.match(fs.readFileSync(path.join(dir, 'SHA256SUMS.sig'), 'utf8'), /^-----BEGIN SSH SIGNATURE-----/);

  const byEnv = path.join(tmp, 'by-env');
  release(byEnv, { env: { GATEHOUSE_RELEASE_SIGNING_KEY: key } });
  t.same(
    fs.readFileSync(path.join(byEnv, 'SHA256SUMS.sig')),
    fs.readFileSync(path.join(dir, 'SHA256SUMS.sig')),
    'the same signature: a signed release stays reproducible',
  );

  const ops = fs.readFileSync(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
  const docs = checks(/## Installing a release[\s\S]*?```sh\n([\s\S]*?)```/.exec(ops)![1]);
  spawnSync('tar', ['-xzf', path.join(dir, `${NAME}.tar.gz`), '-C', tmp]);
  const quickstart = fs.readFileSync(path.join(tmp, NAME, 'QUICKSTART.md'), 'utf8');
  const qs = checks(
    quickstart
      .split('\n')
      .filter((l) => l.startsWith('    '))
      .join('\n'),
  );
  for (const [what, script] of [
    ['docs/operations.md', docs],
    ['QUICKSTART.md', qs],
  ]) {
    t.match(
      script,
      /ssh-keygen -Y verify -f allowed_signers -I releases@gatehouse -n gatehouse-release -s SHA256SUMS\.sig < SHA256SUMS/,
      `${what}: the verify command`,
    );
    t.ok(script.includes(`echo '${SIGNERS}' > allowed_signers`), `${what}: writes the committed allowed_signers line`);
    t.equal(script.split('\n')[0], 'set -e', `${what}: stops at the first failed check`);
    const ours = script.replaceAll(PROJECT_KEY, pub.split(' ')[1]);
    const good = run(ours, dir);
    t.equal(good.status, 0, `${what}: ${good.stdout}${good.stderr}`);
    t.match(good.stderr + good.stdout, /Good "gatehouse-release" signature for releases@gatehouse/, `${what}: ssh-keygen says who signed`);
    t.match(good.stdout, new RegExp(`${NAME}\\.tar\\.gz: OK`), `${what}: and the archive matches`);
    t.not(run(script, dir).status, 0, `${what}: the project's key refuses a signature by another key`);
  }

  const tampered = path.join(tmp, 'tampered');
  fs.cpSync(dir, tampered, { recursive: true });
  const sums = fs.readFileSync(path.join(tampered, 'SHA256SUMS'), 'utf8');
  fs.writeFileSync(
    path.join(tampered, 'SHA256SUMS'),
    sums.replace(/^./, (c) => (c === '0' ? '1' : '0')),
  );
  const bad = run(docs.replaceAll(PROJECT_KEY, pub.split(' ')[1]), tampered);
  t.not(bad.status, 0, 'a changed SHA256SUMS fails the signature check');
  t.notMatch(bad.stdout, /: OK/, 'before any file is checked against it');
});

t.test('without a key the release is made, says it is unsigned, and leaves no old signature behind', async (t) => {
  const tmp = tempDir(t);
  const [key] = keyPair(tmp);
  const dir = path.join(tmp, 'release');
  release(dir, { key });
  t.ok(fs.existsSync(path.join(dir, 'SHA256SUMS.sig')));
  const unsigned = release(dir);
  t.match(unsigned.stderr, /UNSIGNED: no signing key given \(--sign-key FILE or GATEHOUSE_RELEASE_SIGNING_KEY\)/);
  t.notOk(fs.existsSync(path.join(dir, 'SHA256SUMS.sig')), 'no SHA256SUMS.sig');
  t.ok(fs.existsSync(path.join(dir, 'SHA256SUMS')));
  const missing = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts', 'release.mjs'), '--package-only', '--out', dir, '--sign-key', path.join(tmp, 'nope')],
    {
      encoding: 'utf8',
      cwd: ROOT,
    },
  );
  t.not(missing.status, 0, 'a key that is not there stops the release');
  t.match(missing.stderr, /the signing key .*nope does not exist/);
});
