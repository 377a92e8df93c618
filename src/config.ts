/**
 * Flags + environment (+ *_FILE for secrets) → a validated, frozen Config.
 * Flags beat environment; bad values are refused at start with a clear message.
 */
import fs from 'node:fs';
import { AppError } from './errors';
import type { LogLevel, TrustProxy } from './config/parsers';
import { type Flags, SETTINGS, type Setting, type SettingName, flagName } from './config/settings';

export { LOG_LEVELS, parseDuration, type LogLevel, type TrustProxy } from './config/parsers';
export { settingOptions, settingsTable, type Flags, type SettingName, type SettingOption } from './config/settings';

export interface Config {
  readonly dataDir: string;
  /** PostgreSQL URL, or null for SQLite at <dataDir>/gatehouse.sqlite. */
  readonly db: string | null;
  readonly host: string;
  readonly port: number;
  readonly tokenTtlSeconds: number;
  readonly bcryptCost: number;
  readonly passwordMinLength: number;
  readonly publicStatistics: boolean;
  /** Serve /metrics to everyone (else administrators and the metrics token only). */
  readonly publicMetrics: boolean;
  /** A bearer token that may read /metrics (from --metrics-token-file), or null. */
  readonly metricsToken: string | null;
  /** Log lines below this level are dropped. */
  readonly logLevel: LogLevel;
  readonly publicUrl: string;
  /** False when publicUrl was derived from host and port: the bound address replaces it (port 0). */
  readonly publicUrlSet: boolean;
  /** Link templates with {token} for apps with their own screens; null: Gatehouse's pages. */
  readonly verifyUrl: string | null;
  readonly resetUrl: string | null;
  /** Serve the HTML pages (/signin, /signup, /verify-email, /reset-password, /account). */
  readonly pages: boolean;
  /** Browser origins allowed to call the API (CORS); empty: no CORS headers at all. */
  readonly corsOrigins: readonly string[];
  /** The parent domain the pages' session cookie is set on (forward authentication across subdomains), or null. */
  readonly cookieDomain: string | null;
  /** The WebAuthn relying-party id (a parent domain of the public URL's host), or null: that host itself. */
  readonly passkeyRpId: string | null;
  /** Reverse proxies in front (null: none; X-Forwarded-For is then ignored). */
  readonly trustProxy: TrustProxy | null;
  readonly rateLimits: boolean;
  /** Password hashes computed at once; the rest wait, so database reads keep pool threads. */
  readonly hashConcurrency: number;
  /** How long a store operation waits for a lock before answering "unavailable". */
  readonly busyTimeoutMs: number;
  readonly shutdownGraceMs: number;
  /** smtp(s)://user:pass@host:port, or null to write messages to <dataDir>/outbox/. */
  readonly smtpUrl: string | null;
  readonly mailFrom: string;
  readonly requireVerifiedEmail: boolean;
  readonly verificationTtlSeconds: number;
  readonly resetTtlSeconds: number;
  readonly limits: Limits;
}

export interface Limits {
  readonly windowSeconds: number;
  /** Failed signins for one account from one address before that pair locks. */
  readonly signinFailuresPerAccount: number;
  /** Failed signins for one account from all addresses before it locks everywhere. */
  readonly signinFailuresPerAccountTotal: number;
  readonly signinFailuresPerAddress: number;
  readonly signupsPerAddress: number;
  readonly totpFailuresPerAccount: number;
  readonly resetRequestsPerAccount: number;
  readonly resetWindowSeconds: number;
}

function resolve<T>(key: SettingName, flags: Flags, env: NodeJS.ProcessEnv): T {
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
    return s.parse(content.trim(), `${s.env}_FILE`);
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

export function loadConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const r = <T>(k: SettingName) => resolve<T>(k, flags, env);
  const host = r<string>('host');
  const port = r<number>('port');
  const givenUrl = r<string>('publicUrl');
  const publicUrl = givenUrl || defaultPublicUrl(host, port);
  return Object.freeze({
    dataDir: r<string>('dataDir'),
    db: r<string | null>('db'),
    host,
    port,
    tokenTtlSeconds: r<number>('tokenTtl'),
    bcryptCost: r<number>('bcryptCost'),
    passwordMinLength: r<number>('passwordMinLength'),
    publicStatistics: r<boolean>('publicStatistics'),
    publicMetrics: r<boolean>('publicMetrics'),
    metricsToken: r<string | null>('metricsTokenFile'),
    logLevel: r<LogLevel>('logLevel'),
    publicUrl,
    publicUrlSet: givenUrl !== '',
    corsOrigins: r<readonly string[]>('corsOrigin'),
    verifyUrl: r<string | null>('verifyUrl'),
    resetUrl: r<string | null>('resetUrl'),
    pages: r<boolean>('pages'),
    cookieDomain: checkedCookieDomain(r<string | null>('cookieDomain'), publicUrl),
    // A browser accepts an RP id only if it is the page's host or a parent of it (WebAuthn's rule).
    passkeyRpId: checkedCookieDomain(r<string | null>('passkeyRpId'), publicUrl, '--passkey-rp-id'),
    trustProxy: r<TrustProxy | null>('trustProxy'),
    rateLimits: r<boolean>('rateLimits'),
    hashConcurrency: r<number>('hashConcurrency'),
    busyTimeoutMs: r<number>('busyTimeout'),
    shutdownGraceMs: r<number>('shutdownGrace'),
    smtpUrl: r<string | null>('smtpUrl'),
    mailFrom: r<string>('mailFrom'),
    requireVerifiedEmail: r<boolean>('requireVerifiedEmail'),
    verificationTtlSeconds: r<number>('verificationTtl'),
    resetTtlSeconds: r<number>('resetTtl'),
    limits: Object.freeze({
      windowSeconds: r<number>('limitWindow'),
      signinFailuresPerAccount: r<number>('signinFailuresPerAccount'),
      signinFailuresPerAccountTotal: r<number>('signinFailuresPerAccountTotal'),
      signinFailuresPerAddress: r<number>('signinFailuresPerAddress'),
      signupsPerAddress: r<number>('signupsPerAddress'),
      totpFailuresPerAccount: r<number>('totpFailuresPerAccount'),
      resetRequestsPerAccount: r<number>('resetRequestsPerAccount'),
      resetWindowSeconds: r<number>('resetWindow'),
    }),
  });
}
