/**
 * Loading native addons (.node files) inside the single executable: they are embedded as SEA
 * assets, written once to a cache folder named by their SHA-256, and opened with
 * process.dlopen. Outside an executable (a plain `node dist/gatehouse.cjs`), they are read
 * from the native/ folder beside the bundle.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function seaAsset(name: string): Buffer | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sea = require('node:sea') as { isSea(): boolean; getAsset(key: string): ArrayBuffer };
    return sea.isSea() ? Buffer.from(sea.getAsset(name)) : null;
  } catch {
    return null;
  }
}

function cacheRoot(): string {
  if (process.env.GATEHOUSE_NATIVE_CACHE) return process.env.GATEHOUSE_NATIVE_CACHE;
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(xdg, 'gatehouse', 'native');
}

function materialize(name: string, bytes: Buffer): string {
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
  const dir = path.join(cacheRoot(), digest);
  const file = path.join(dir, name);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Write then rename: two processes starting together never load a half-written file.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes, { mode: 0o500 });
  fs.renameSync(tmp, file);
  return file;
}

export function loadNative(name: string): unknown {
  const bytes = seaAsset(name);
  const file = bytes ? materialize(name, bytes) : path.join(__dirname, 'native', name);
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file, os.constants.dlopen.RTLD_NOW);
  return mod.exports;
}
