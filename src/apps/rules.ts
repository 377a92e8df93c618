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

/** RFC 3986's unreserved characters: every app reads `%61` as `a`, so they are decoded before matching. */
const UNRESERVED = /^[A-Za-z0-9._~-]$/;

/**
 * Characters that some app reads as `/`, `\` or `.`: Windows' best-fit conversion to a code page
 * (the fullwidth and division slashes become `/`, `¥` and `₩` become `\` in Japanese and Korean
 * code pages), an app that normalizes paths to NFKC, or a parser that takes the ideographic full
 * stop for a dot as URL host parsers do. Everything whose NFKC form holds `/`, `\`, `.`, `%` or
 * `;` is refused too (lookAlike), which covers the fullwidth and small forms and the dot leaders.
 * Letters that only resemble them (Katakana ノ) are not in the list: they are words in paths.
 */
const LOOK_ALIKES = new Set([
  // of "/"
  0x2044, // FRACTION SLASH
  0x2215, // DIVISION SLASH
  0xff0f, // FULLWIDTH SOLIDUS
  0x29f8, // BIG SOLIDUS
  0x2571, // BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
  0x27cb, // MATHEMATICAL RISING DIAGONAL
  0x1735, // PHILIPPINE SINGLE PUNCTUATION
  0x2f03, // KANGXI RADICAL SLASH
  0x3033, // VERTICAL KANA REPEAT MARK UPPER HALF
  0x31d3, // CJK STROKE SP
  0x1d23a, // GREEK INSTRUMENTAL NOTATION SYMBOL-47
  // of "\"
  0xff3c, // FULLWIDTH REVERSE SOLIDUS
  0xfe68, // SMALL REVERSE SOLIDUS
  0x2216, // SET MINUS
  0x29f5, // REVERSE SOLIDUS OPERATOR
  0x29f9, // BIG REVERSE SOLIDUS
  0x2572, // BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
  0x27cd, // MATHEMATICAL FALLING DIAGONAL
  0x31d4, // CJK STROKE D
  0x00a5, // YEN SIGN: 0x5C, the backslash, in Windows' Japanese code page
  0x20a9, // WON SIGN: likewise in the Korean one
  // of "."
  0xff0e, // FULLWIDTH FULL STOP
  0xfe52, // SMALL FULL STOP
  0x2024, // ONE DOT LEADER
  0x2025, // TWO DOT LEADER
  0x2026, // HORIZONTAL ELLIPSIS
  0x3002, // IDEOGRAPHIC FULL STOP
  0xff61, // HALFWIDTH IDEOGRAPHIC FULL STOP
  0x0701, // SYRIAC SUPRALINEAR FULL STOP
  0x0702, // SYRIAC SUBLINEAR FULL STOP
  0xa4f8, // LISU LETTER TONE MYA TI
  0xa60e, // VAI FULL STOP
  0x10a50, // KHAROSHTHI PUNCTUATION DOT
]);

const lookAlike = (codePoint: number) => LOOK_ALIKES.has(codePoint) || /[/\\.%;]/.test(String.fromCodePoint(codePoint).normalize('NFKC'));

/** Refuses invalid UTF-8 (overlong forms such as `%C0%AE` for `.`, surrogates, beyond U+10FFFF): apps that decode leniently read them as ASCII. */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A run of bytes at or above 0x80 (percent-encoded, or raw: a header holds one byte per
 * character), checked as UTF-8 and written percent-encoded, hex in upper case, so the raw and the
 * encoded spelling of one character are one path. A problem when it is not UTF-8 or holds a look-alike.
 */
function encodedRun(bytes: number[]): { text: string } | { problem: string } {
  let decoded: string;
  try {
    decoded = UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return { problem: 'the path has bytes that are not UTF-8 (such as the overlong %C0%AE for a dot), which apps read in different ways' };
  }
  for (const ch of decoded) {
    const codePoint = ch.codePointAt(0) ?? 0;
    if (lookAlike(codePoint))
      return { problem: `the path has U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}, a look-alike of /, \\ or . that some apps read as one` };
  }
  return { text: bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('') };
}

/**
 * The path a rule is matched on: what the app behind the proxy will read, not
 * the bytes as they arrived. Percent-encoded unreserved characters are decoded, `//` is merged and
 * `.`/`..` segments are resolved (RFC 3986 section 6). What an app may read in more than one way
 * is refused rather than guessed: an encoded `/`, `\` or control character (NUL included), an
 * encoded `%` (double encoding), a `;` parameter, a raw `\`, a `..` above the root, bytes that are
 * not UTF-8 (overlong forms included) and look-alikes of `/`, `\` and `.` (LOOK_ALIKES). Other
 * characters are written percent-encoded, hex in upper case.
 */
export function normalPath(raw: string): { path: string } | { problem: string } {
  if (!raw.startsWith('/')) return { problem: 'the path must start with /' };
  let decoded = '';
  let run: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    const code = c.charCodeAt(0);
    const hex = c === '%' ? raw.slice(i + 1, i + 3) : '';
    const byte = /^[0-9A-Fa-f]{2}$/.test(hex) ? parseInt(hex, 16) : -1;
    if (byte >= 0x80 || code >= 0x80) {
      if (byte >= 0x80) {
        run.push(byte);
        i += 2;
      } else if (code <= 0xff) run.push(code);
      else {
        // Not from a header (those are one byte a character): a character, as UTF-8; a lone
        // surrogate is no character, so it becomes a byte UTF-8 never holds.
        const codePoint = raw.codePointAt(i) ?? code;
        if (codePoint >= 0xd800 && codePoint <= 0xdfff) run.push(0xff);
        else run.push(...Buffer.from(String.fromCodePoint(codePoint), 'utf8'));
        if (codePoint > 0xffff) i++;
      }
      continue;
    }
    if (run.length > 0) {
      const encoded = encodedRun(run);
      if ('problem' in encoded) return encoded;
      decoded += encoded.text;
      run = [];
    }
    if (c === '%') {
      if (byte < 0) return { problem: 'the path has a % that is not followed by two hex digits' };
      if (byte === 0x2f || byte === 0x5c) return { problem: 'the path has an encoded / or \\ (%2F, %5C), which apps read in different ways' };
      if (byte === 0x25) return { problem: 'the path is encoded twice (%25)' };
      if (byte < 0x20 || byte === 0x7f) return { problem: 'the path has an encoded control character (such as %00)' };
      const ch = String.fromCharCode(byte);
      decoded += UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
      i += 2;
    } else if (c === ';') return { problem: 'the path has a ; parameter, which some apps drop and others keep' };
    else if (c === '\\') return { problem: 'the path has a \\, which some apps read as /' };
    else if (code <= 0x20 || code === 0x7f) return { problem: 'the path has a space or control character' };
    else decoded += c;
  }
  if (run.length > 0) {
    const encoded = encodedRun(run);
    if ('problem' in encoded) return encoded;
    decoded += encoded.text;
  }
  const segments = decoded.split('/').slice(1);
  const kept: string[] = [];
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    if (segment === '..') {
      if (kept.length === 0) return { problem: 'the path climbs above / with ..' };
      kept.pop();
    } else if (segment !== '.' && segment !== '') {
      kept.push(segment);
      continue;
    }
    // A path ending in `/`, `/.` or `/..` names a folder: keep its trailing slash.
    if (last && kept.length > 0) kept.push('');
  }
  return { path: '/' + kept.join('/') };
}

/** A path prefix as given to `app add`: starts with `/`, no query, only a path's characters, already in the form normalPath gives. */
export function parsePrefix(raw: string, flag: string): string {
  const p = raw.trim();
  // Only what RFC 3986 allows in a path as it is (no markup, quotes or spaces), already normal.
  const normal = !/^[A-Za-z0-9\-._~!$&'()*+,=:@/%]*$/.test(p) || p.length > 512 ? null : normalPath(p);
  if (normal === null || !('path' in normal) || normal.path !== p) {
    throw new AppError(
      'invalid_input',
      `${flag} takes a path prefix like /admin (no query, no "." or ".." segments, no "//", no ";", no encoded letters or digits; other characters percent-encoded, as /caf%C3%A9), got "${raw}"`,
    );
  }
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

/** Whether `path` is `prefix` or below it, segment by segment (`/admin` covers `/admin/x`, not `/administrator`). */
export function under(path: string, prefix: string): boolean {
  if (prefix === '/') return true;
  return path === prefix || path.startsWith(prefix + '/');
}

/**
 * A path segment as the most lenient app reads it (Windows and macOS file systems, IIS, apps that
 * fold Unicode): compatibility forms folded (NFKC: fullwidth letters, the Kelvin sign, the long s),
 * characters no one sees dropped (zero-width joiners, the byte-order mark), case folded (the dotless
 * ı as i), an NTFS stream name (`::$DATA`) and trailing dots and spaces cut.
 */
function lenientSegment(segment: string): string {
  let text: string;
  try {
    text = decodeURIComponent(segment);
  } catch {
    text = segment;
  }
  return text
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .toUpperCase()
    .toLowerCase()
    .replace(/(?::[^:]*)?::?\$[a-z0-9_]*$/, '')
    .replace(/[. ]+$/, '');
}

/** A Windows short name (`ADMINI~1`, `SECRE~1.TXT`): its stem, which any longer name may have made. */
const SHORT_NAME = /^([^~.]{1,6})~\d{1,6}(?:\.[^.]{0,3})?$/;

/** Whether a lenient app may read the path segment `seg` as the rule's segment `rule` (both lenient). */
const mayBe = (seg: string, rule: string) => seg === rule || (SHORT_NAME.exec(seg)?.[1] !== undefined && rule.startsWith(SHORT_NAME.exec(seg)![1]));

/** Whether `path` falls under `prefix` when both are read leniently. */
function lenientlyUnder(path: string, prefix: string): boolean {
  const want = prefix.split('/').slice(1).map(lenientSegment);
  const have = path.split('/').slice(1).map(lenientSegment);
  return have.length >= want.length && want.every((rule, i) => mayBe(have[i], rule));
}

/**
 * The first of `prefixes` that `path` falls under only when read leniently (`/Admin/`, `/admin./`,
 * `/ａdmin`, `/admin%E2%80%8C`, `/admin::$DATA`, `/ADMIN~1`), or null. Rules match exactly (paths
 * are case-sensitive), but such a path is ambiguous: refused, not guessed.
 */
export function ambiguousUnder(path: string, prefixes: readonly string[]): string | null {
  return prefixes.find((p) => p !== '/' && !under(path, p) && lenientlyUnder(path, p)) ?? null;
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
