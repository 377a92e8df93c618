/** The settings' value parsers: each takes the raw text and the name to blame (flag, variable or file). */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { AppError } from '../errors';
import { targetPolicy } from './address-ranges';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const logLevel = (raw: string, name: string): LogLevel => {
  const v = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v)) throw new AppError('invalid_input', `${name} must be one of ${LOG_LEVELS.join(', ')}`);
  return v as LogLevel;
};

/** A file holding a bearer token for /metrics: at least 16 characters, read once at start. */
export const tokenFile = (raw: string, name: string): string => {
  let content: string;
  try {
    content = fs.readFileSync(raw, 'utf8').trim();
  } catch {
    throw new AppError('invalid_input', `${name}: cannot read ${raw}`);
  }
  if (content.length < 16 || /\s/.test(content)) throw new AppError('invalid_input', `${name}: the token must be at least 16 characters, without spaces`);
  return content;
};

/** How many proxies are in front, or the networks they are in (CIDR or single addresses). */
export type TrustProxy = { readonly hops: number } | { readonly networks: readonly string[] };

/** "1" / "2" hops, "true" (one proxy), "false", or "10.0.0.0/8,fd00::/8,127.0.0.1". */
export const trustProxy = (raw: string, name: string): TrustProxy | null => {
  const value = raw.trim();
  if (/^(|0|false|no|off)$/i.test(value)) return null;
  if (/^(true|yes|on)$/i.test(value)) return Object.freeze({ hops: 1 });
  if (/^\d+$/.test(value)) return Object.freeze({ hops: int(1, 16)(value, name) });
  const networks = value.split(',').map((n) => n.trim());
  for (const n of networks) {
    const [address, prefix, extra] = n.split('/');
    const family = net.isIP(address);
    const bits = family === 6 ? 128 : 32;
    if (family === 0 || extra !== undefined || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits))) {
      throw new AppError('invalid_input', `${name} takes a number of proxies or their networks (like 10.0.0.0/8,127.0.0.1), got "${n}"`);
    }
  }
  return Object.freeze({ networks: Object.freeze(networks) });
};

export const bool = (raw: string, name: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new AppError('invalid_input', `${name} must be true or false, got "${raw}"`);
};

export const int =
  (min: number, max: number) =>
  (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new AppError('invalid_input', `${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new AppError('invalid_input', `${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };

/** "90", "90s", "15m", "24h", "7d" → seconds. */
export function parseDuration(raw: string, name: string): number {
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new AppError('invalid_input', `${name} must be a duration like 3600, 30m, 24h or 7d, got "${raw}"`);
  const n = Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  if (n < 1 || n > 366 * 86400) throw new AppError('invalid_input', `${name} must be between 1s and 366d`);
  return n;
}

export const str = (raw: string): string => raw;

export const url = (raw: string, name: string): string => {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw);
    const hint = /^[a-z0-9.-]+(:\d+)?(\/.*)?$/i.test(raw) ? ` (did you mean https://${raw}?)` : '';
    throw new AppError('invalid_input', `${name} must be a URL with its scheme, like https://auth.example.com; got ${shown}${hint}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('invalid_input', `${name} must be an http(s) URL`);
  return u.toString().replace(/\/$/, '');
};

/** Exact origins ("https://app.example.com"), comma-separated; never a wildcard or a path. */
export const origins = (raw: string, name: string): readonly string[] => {
  const list = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const o of list) {
    let u: URL | undefined;
    try {
      u = new URL(o);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== o) {
      throw new AppError('invalid_input', `${name} takes exact origins like https://app.example.com (scheme, host, port; no path, no wildcard)`);
    }
  }
  return Object.freeze(list);
};

/** A link template for an app's own screen: an http(s) URL with {token} in it. */
export const linkTemplate = (raw: string, name: string): string | null => {
  if (raw === '') return null;
  let ok: boolean;
  try {
    const u = new URL(raw.split('{token}').join('x'));
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    ok = false;
  }
  if (!ok || !raw.includes('{token}'))
    throw new AppError('invalid_input', `${name} must be an http(s) URL with {token} in it, like https://app.example.com/verify#token={token}`);
  return raw;
};

/** A parent domain for the session cookie: a host name with at least one dot, no scheme or port. */
export const cookieDomain = (raw: string, name: string): string | null => {
  const d = raw.trim().toLowerCase().replace(/^\./, '');
  if (d === '') return null;
  let host: string;
  try {
    host = new URL(`http://${d}/`).hostname;
  } catch {
    host = '';
  }
  if (host !== d || !d.includes('.') || /^[\d.]+$/.test(d))
    throw new AppError('invalid_input', `${name} takes a domain like example.com (no scheme, no port), got "${raw}"`);
  return d;
};

export const dbUrl = (raw: string, name: string): string | null => {
  if (raw === '' || raw === 'sqlite') return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    // Never echo the value: it may hold a password.
    throw new AppError('invalid_input', `${name} must be a postgres:// URL (or empty for the SQLite default)`);
  }
  return raw;
};

export const smtpUrl = (raw: string, name: string): string | null => {
  if (raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('invalid_input', `${name} must be an smtp:// or smtps:// URL`);
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new AppError('invalid_input', `${name} must be an smtp:// or smtps:// URL`);
  return raw;
};

export const mailbox = (raw: string, name: string): string => {
  if (!/^[^\r\n]{3,300}$/.test(raw) || !raw.includes('@'))
    throw new AppError('invalid_input', `${name} must be an address like "Gatehouse <noreply@example.com>"`);
  return raw;
};

/** Comma-separated names (group names), trimmed, empty ones dropped. */
export const names = (raw: string): readonly string[] =>
  raw
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');

/** `--webhook-allow-private`: range names, addresses or CIDR blocks, each checked now (a typo refuses to start). */
export const allowPrivate = (raw: string): readonly string[] => {
  const entries = names(raw);
  targetPolicy(entries);
  return Object.freeze(entries);
};

/** An LDAP DN of attribute=value parts (dc=example,dc=com); checked loosely here, fully by the listener. */
export const ldapDn = (raw: string, name: string): string => {
  const v = raw.trim();
  if (!/^[a-zA-Z][a-zA-Z0-9-]*=[^,=]+(,\s*[a-zA-Z][a-zA-Z0-9-]*=[^,=]+)*$/.test(v))
    throw new AppError('invalid_input', `${name} must be a DN such as dc=example,dc=com, got "${raw.slice(0, 100)}"`);
  return v;
};

/** A PEM file's contents (a certificate chain or a key), read at start; a clear error when it is missing or not PEM. */
/** The PEM read as what it must be (a certificate chain, a private key): refused at load, naming where it came from. */
function checkedPem(text: string, what: string, name: string, where: string): string {
  try {
    if (what === 'certificate') new X509Certificate(text);
    else createPrivateKey(text);
  } catch {
    throw new AppError('invalid_input', `${name}: ${where} does not hold a ${what} OpenSSL can read`);
  }
  return text;
}

export const pemFile =
  (what: string) =>
  (raw: string, name: string): string => {
    // The PEM itself (from a *_FILE variable naming the PEM file), or the path of a PEM file.
    if (/^-----BEGIN [A-Z ]+-----/.test(raw.trim())) return checkedPem(raw.trim(), what, name, 'the PEM given');
    let text: string;
    try {
      text = fs.readFileSync(raw.trim(), 'utf8');
    } catch {
      throw new AppError('invalid_input', `${name}: cannot read the ${what} file ${raw.slice(0, 200)}`);
    }
    if (!/-----BEGIN [A-Z ]+-----/.test(text)) throw new AppError('invalid_input', `${name}: ${raw.slice(0, 200)} is not a PEM ${what}`);
    return checkedPem(text, what, name, raw.slice(0, 200));
  };
