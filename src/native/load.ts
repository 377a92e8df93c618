/**
 * Loading native addons (.node files) inside the single executable: they are embedded as SEA
 * assets, written once to a cache folder named by their SHA-256, and opened with
 * process.dlopen. Outside an executable (a plain `node dist/gatehouse.cjs`), they are read
 * from the native/ folder beside the bundle.
 *
 * A cached file is loaded only if it is a regular file owned by this user, writable by nobody
 * else, in a folder of the same kind, and its bytes hash to the embedded addon's; anything else
 * at that path is replaced. Without a usable cache folder (no writable home, as under
 * `su nobody`), the addons go to a private temporary folder removed at exit.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** SHA-256 of each embedded addon, written into the bundle by scripts/build.mjs. */
declare const GATEHOUSE_NATIVE_DIGESTS: Record<string, string> | undefined;

type Sea = { isSea(): boolean; getAsset(key: string): ArrayBuffer; getAsset(key: string, encoding: 'utf8'): string };
/** node:sea when running as the single executable, else null (a plain bundle, or the sources). */
export function sea(): Sea | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('node:sea') as Sea;
    return mod.isSea() ? mod : null;
  } catch {
    return null;
  }
}

function cacheRoot(): string {
  if (process.env.GATEHOUSE_NATIVE_CACHE) return process.env.GATEHOUSE_NATIVE_CACHE;
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(xdg, 'gatehouse', 'native');
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Ours alone: owned by this user, and neither group nor others may write to it. */
function ownedPrivately(stat: fs.Stats): boolean {
  return stat.uid === process.getuid?.() && (stat.mode & 0o022) === 0;
}

/** The folder exists (made if missing) and is ours alone; false if it cannot be. */
function privateDir(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && ownedPrivately(stat);
  } catch {
    return false;
  }
}

/**
 * The addon's path in `dir`, verified or (re)written; null when the folder cannot hold it. The
 * embedded bytes are read only to write them: a verified cached file needs just its digest.
 */
function placeIn(dir: string, name: string, bytes: () => Buffer, digest: string): string | null {
  if (!privateDir(dir)) return null;
  const file = path.join(dir, name);
  try {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false });
    if (stat && stat.isFile() && ownedPrivately(stat) && sha256(fs.readFileSync(file)) === digest) return file;
  } catch {
    return null;
  }
  const data = bytes(); // throws if the executable itself is damaged
  try {
    // Write then rename (over whatever was there): two processes starting together never load a half-written file.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, data, { mode: 0o500 });
    fs.renameSync(tmp, file);
    return file;
  } catch {
    return null;
  }
}

let tempRoot: string | null = null;
function privateTempDir(): string {
  if (!tempRoot) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-native-'));
    tempRoot = dir;
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return tempRoot;
}

function materialize(sea: Sea, name: string): string {
  const embedded = () => Buffer.from(sea.getAsset(name));
  let digest = typeof GATEHOUSE_NATIVE_DIGESTS === 'undefined' ? undefined : GATEHOUSE_NATIVE_DIGESTS[name];
  let bytes: Buffer | null = null;
  const read = () => {
    bytes ??= embedded();
    if (sha256(bytes) !== digest) throw new Error(`the embedded native addon ${name} does not match its digest: the executable is damaged`);
    return bytes;
  };
  if (digest === undefined) digest = sha256((bytes = embedded()));
  const cached = placeIn(path.join(cacheRoot(), digest.slice(0, 32)), name, read, digest);
  if (cached) return cached;
  const temp = placeIn(privateTempDir(), name, read, digest);
  if (!temp) throw new Error(`cannot write the native addon ${name} to a cache or temporary folder (set GATEHOUSE_NATIVE_CACHE)`);
  return temp;
}

/** An addon's file: the executable's copy (materialized), or native/ beside a plain bundle. */
function addonFile(name: string): string {
  const executable = sea();
  return executable ? materialize(executable, name) : path.join(__dirname, 'native', name);
}

/** The file of an addon built into the bundle, for a worker thread to open; undefined when not running from the bundle. */
export function bundledAddonFile(name: string): string | undefined {
  return typeof GATEHOUSE_NATIVE_DIGESTS === 'undefined' ? undefined : addonFile(name);
}

export function loadNative(name: string): unknown {
  const file = addonFile(name);
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file, os.constants.dlopen.RTLD_NOW);
  return mod.exports;
}
