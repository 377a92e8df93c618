/**
 * A secret in a configuration file is never its value but a reference: `{env: NAME}` (an
 * environment variable of the process applying the file) or `{file: PATH}` (a file: relative to
 * the configuration file, or absolute). A file must lie, once its links are followed, inside the
 * configuration file's folder, /run/secrets (Docker, Kubernetes) or $CREDENTIALS_DIRECTORY
 * (systemd): a file cannot name /etc/shadow or a key elsewhere on the machine. One trailing line
 * break is dropped; an empty secret, or one past 4 KiB, is refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors';

export const SECRET_REF_SCHEMA = {
  description: 'A secret: {env: NAME} (an environment variable) or {file: PATH} (a file beside this one, or under /run/secrets or $CREDENTIALS_DIRECTORY).',
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['env'], properties: { env: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' } } },
    { type: 'object', additionalProperties: false, required: ['file'], properties: { file: { type: 'string', minLength: 1, maxLength: 4096 } } },
  ],
} as const;

export type SecretRef = { env: string } | { file: string };

const MAX_SECRET = 4096;

/** The folders a secret file may be in, for a configuration file at `configFile`. */
export function secretRoots(configFile: string, env: NodeJS.ProcessEnv): string[] {
  const roots = [path.dirname(path.resolve(configFile)), '/run/secrets'];
  // systemd sets it to an absolute path; a relative one would widen the roots to wherever the command runs.
  if (env.CREDENTIALS_DIRECTORY) roots.push(...env.CREDENTIALS_DIRECTORY.split(':').filter((d) => path.isAbsolute(d)));
  return roots;
}

/**
 * A file a configuration file names (a secret, an SP's metadata): read only when, once its links
 * are followed, it lies inside secretRoots, is a regular file and holds at most `max` bytes.
 */
export function readReferencedFile(file: string, where: string, configFile: string, env: NodeJS.ProcessEnv, max: number, what = 'secret file'): string {
  return readReferencedBytes(file, where, configFile, env, max, what).toString('utf8');
}

/** readReferencedFile's bytes, as they are (a logo). */
export function readReferencedBytes(file: string, where: string, configFile: string, env: NodeJS.ProcessEnv, max: number, what: string): Buffer {
  const target = path.resolve(path.dirname(path.resolve(configFile)), file);
  // Opened first, then judged by what was opened (its path through /proc/self/fd): a link swapped
  // between a check and a read cannot slip a file from elsewhere in.
  let fd: number;
  try {
    fd = fs.openSync(target, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    throw new AppError('invalid_input', `${where}: cannot read the ${what} ${file}`);
  }
  try {
    const real = fs.readlinkSync(`/proc/self/fd/${fd}`);
    const inside = secretRoots(configFile, env).some((root) => {
      let r: string;
      try {
        r = fs.realpathSync(root);
      } catch {
        return false;
      }
      return real === r || real.startsWith(r + path.sep);
    });
    if (!inside) {
      throw new AppError('invalid_input', `${where}: the ${what} ${file} is outside the configuration file's folder, /run/secrets and $CREDENTIALS_DIRECTORY`);
    }
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > max) throw new AppError('invalid_input', `${where}: the ${what} ${file} is not a file of at most ${max} bytes`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Which form a reference is, by its own key (never one an object inherits). */
const isEnvRef = (ref: SecretRef): ref is { env: string } => Object.hasOwn(ref, 'env');

/**
 * Why a reference cannot be read where the file is applied, when it simply is not there (the
 * variable is not set, the file does not exist), or null. Anything else wrong with it is
 * resolveSecret's refusal.
 */
export function absentSecret(ref: SecretRef, configFile: string, env: NodeJS.ProcessEnv): string | null {
  if (isEnvRef(ref)) return Object.hasOwn(env, ref.env) && typeof env[ref.env] === 'string' ? null : `the environment variable ${ref.env} is not set`;
  try {
    fs.lstatSync(path.resolve(path.dirname(path.resolve(configFile)), ref.file));
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? `the file ${ref.file} does not exist` : null;
  }
}

export function resolveSecret(ref: SecretRef, where: string, configFile: string, env: NodeJS.ProcessEnv): string {
  let value: string;
  if (isEnvRef(ref)) {
    // Only the environment's own variables: `{env: constructor}` (or toString, __proto__…) would
    // otherwise read what every object inherits, a function and no secret, and fail unexplained.
    const v = Object.hasOwn(env, ref.env) ? env[ref.env] : undefined;
    if (typeof v !== 'string') throw new AppError('invalid_input', `${where}: the environment variable ${ref.env} is not set`);
    value = v;
  } else {
    value = readReferencedFile(ref.file, where, configFile, env, MAX_SECRET);
  }
  value = value.replace(/\r?\n$/, '');
  if (value === '' || Buffer.byteLength(value) > MAX_SECRET)
    throw new AppError('invalid_input', `${where}: the secret is empty or longer than ${MAX_SECRET} bytes`);
  return value;
}

/** Whether two secrets are the same, without a timing that tells how much of them is. */
export function sameSecret(a: string, b: string): boolean {
  const digest = (v: string) => createHash('sha256').update(v).digest();
  return timingSafeEqual(digest(a), digest(b));
}
