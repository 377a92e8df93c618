/**
 * The rules of forward authentication that need no store: which app of a host covers a path,
 * whether a path is bypassed, and where a browser may be sent back to after signing in.
 */
import { AppError } from '../errors';

/** A host as apps are keyed: lower case, no port, no trailing dot. Null when it is not a host name. */
export function normalHost(raw: string): string | null {
  const host = raw.trim().toLowerCase().replace(/\.$/, '');
  if (host === '' || host.length > 253) return null;
  let parsed: URL;
  try {
    parsed = new URL(`http://${host}/`);
  } catch {
    return null;
  }
  // The URL parser punycodes and checks the name; a port or credentials are not part of a host.
  if (parsed.port !== '' || parsed.username !== '' || parsed.password !== '' || parsed.hostname.replace(/\.$/, '') !== host) return null;
  return host;
}

/** A path prefix as given to `app add`: starts with `/`, no query, no dot segments. */
export function parsePrefix(raw: string, flag: string): string {
  const p = raw.trim();
  if (!p.startsWith('/') || /[?#\s\\]/.test(p) || p.length > 512 || new URL(p, 'http://x').pathname !== p) {
    throw new AppError('invalid_input', `${flag} takes a path prefix like /admin (no query, no ".." segments), got "${raw}"`);
  }
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

/** Whether `path` is `prefix` or below it, segment by segment (`/admin` covers `/admin/x`, not `/administrator`). */
export function under(path: string, prefix: string): boolean {
  if (prefix === '/') return true;
  return path === prefix || path.startsWith(prefix + '/');
}

/** Of a host's apps, the one covering `path`: the longest matching prefix wins; an app without prefixes covers the rest. */
export function appFor<T extends { paths: readonly string[] }>(apps: readonly T[], path: string): T | undefined {
  let best: { app: T; length: number } | undefined;
  for (const app of apps) {
    const lengths = app.paths.length === 0 ? [0] : app.paths.filter((p) => under(path, p)).map((p) => p.length);
    for (const length of lengths) if (!best || length > best.length) best = { app, length };
  }
  return best?.app;
}

/**
 * Where a browser may be sent after signing in (`rd`): an absolute https URL (http only while
 * Gatehouse itself is served over http) on the cookie domain or below it, or on Gatehouse's own
 * origin. Anything else is null: no open redirect. `//evil`, `javascript:`, user-info tricks and
 * look-alike suffixes (`example.com.evil.net`, `badexample.com`) all fail the host test after
 * the URL parser has read them as a browser would.
 */
export function safeReturn(raw: unknown, publicUrl: string, cookieDomain: string | null): string | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 4096) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  const own = new URL(publicUrl);
  const schemes = own.protocol === 'https:' ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(u.protocol) || u.username !== '' || u.password !== '') return null;
  if (u.origin === own.origin) return u.toString();
  if (cookieDomain === null) return null;
  const host = u.hostname.toLowerCase();
  return host === cookieDomain || host.endsWith('.' + cookieDomain) ? u.toString() : null;
}
