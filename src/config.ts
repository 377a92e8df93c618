/**
 * Flags + environment (+ *_FILE for secrets) → a validated, frozen Config.
 * Flags beat environment; bad values are refused at start with a clear message.
 */
import fs from 'node:fs';
import { AppError } from './errors';
import { type Flags, SETTINGS, type Setting, type SettingName, type SettingValues, flagName } from './config/settings';

export { LOG_LEVELS, parseDuration, type LogLevel, type TrustProxy } from './config/parsers';
export { settingOptions, settingsTable, type Flags, type SettingName, type SettingOption, type SettingValues } from './config/settings';

/**
 * The server's settings: one field per entry of SETTINGS (config/settings.ts), named as its flag
 * (`tokenTtl` for `--token-ttl`) and typed by its parser, so a setting is declared once. Durations
 * are in seconds unless the table's help says milliseconds.
 */
export type Config = SettingValues & {
  /** The public URL given, or the one derived from the listening address (defaultPublicUrl). */
  readonly publicUrl: string;
  /** False when publicUrl was derived from host and port: the bound address replaces it (port 0). */
  readonly publicUrlSet: boolean;
};

function resolve<K extends SettingName>(key: K, flags: Flags, env: NodeJS.ProcessEnv): SettingValues[K] {
  type T = SettingValues[K];
  const s = SETTINGS[key] as Setting<T>;
  const given = flags[key];
  const fromEnv = env[s.env];
  if (s.secret && fromEnv && env[`${s.env}_FILE`]) {
    throw new AppError('invalid_input', `${s.env} and ${s.env}_FILE are both set; keep one`);
  }
  if (given !== undefined) return s.parse(String(given), flagName(key));
  if (fromEnv !== undefined && fromEnv !== '') return s.parse(fromEnv, s.env);
  const file = s.secret ? env[`${s.env}_FILE`] : undefined;
  if (file) {
    let content: string;
    try {
      content = fs.readFileSync(file, 'utf8');
    } catch {
      throw new AppError('invalid_input', `${s.env}_FILE: cannot read ${file}`);
    }
    try {
      return s.parse(content.trim(), `${s.env}_FILE`);
    } catch (err) {
      // A parser's message may quote the value, and this value is a secret: name the file only.
      if (err instanceof AppError) throw new AppError('invalid_input', `${s.env}_FILE: what ${file} holds is not a valid value for ${flagName(key)}`);
      throw err;
    }
  }
  return typeof s.fallback === 'function' ? (s.fallback as () => T)() : s.fallback;
}

const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|localhost)$/i;

/**
 * The public URL when none is given: the listening address, except that a loopback address
 * becomes `localhost`. Browsers treat http://localhost as a secure context and accept it as a
 * passkey relying-party id; an IP address can be neither.
 */
export function defaultPublicUrl(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  if (LOOPBACK.test(bare)) return `http://localhost:${port}`;
  return `http://${bare.includes(':') ? `[${bare}]` : bare}:${port}`;
}

/**
 * Why passkeys cannot work with this public URL, or null when they can: WebAuthn needs a secure
 * context (https, or http on localhost) and a host name for the relying-party id.
 */
export function passkeyObstacle(publicUrl: string): string | null {
  const { protocol, hostname } = new URL(publicUrl);
  const host = hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$/.test(host) || host.includes(':')) return `${host} is an IP address, and a passkey belongs to a host name`;
  const local = host === 'localhost' || host.endsWith('.localhost');
  if (protocol !== 'https:' && !local) return `browsers offer passkeys only on https (or http://localhost), not on ${protocol}//${host}`;
  return null;
}

/** A browser sets a cookie only for a domain its page is on: the public URL must be under the cookie domain. */
function checkedCookieDomain(domain: string | null, publicUrl: string, flag = '--cookie-domain'): string | null {
  if (domain === null) return null;
  const host = new URL(publicUrl).hostname;
  if (host !== domain && !host.endsWith('.' + domain)) {
    throw new AppError('invalid_input', `${flag} ${domain} does not hold the public URL's host ${host}: set --public-url to an address under it`);
  }
  return domain;
}

/** Settings that only work together: refused at load, before anything starts. */
function checkPairs(v: SettingValues): void {
  if ((v.ldapTlsCert === null) !== (v.ldapTlsKey === null)) {
    throw new AppError('invalid_input', '{--ldap-tls-cert} and {--ldap-tls-key} go together: give both');
  }
  if (v.ldapsPort !== null && v.ldapTlsCert === null) throw new AppError('invalid_input', '{--ldaps-port} needs {--ldap-tls-cert} and {--ldap-tls-key}');
}

export function loadConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const values = {} as Record<SettingName, unknown>;
  for (const key of Object.keys(SETTINGS) as SettingName[]) values[key] = resolve(key, flags, env);
  const v = values as SettingValues;
  checkPairs(v);
  const publicUrl = v.publicUrl || defaultPublicUrl(v.host, v.port);
  return Object.freeze({
    ...v,
    publicUrl,
    publicUrlSet: v.publicUrl !== '',
    cookieDomain: checkedCookieDomain(v.cookieDomain, publicUrl),
    // A browser accepts an RP id only if it is the page's host or a parent of it (WebAuthn's rule).
    passkeyRpId: checkedCookieDomain(v.passkeyRpId, publicUrl, '--passkey-rp-id'),
  });
}
