/**
 * Flags + environment (+ *_FILE for secrets) → a validated, frozen Config.
 * Flags beat environment; bad values are refused at start with a clear message.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AppError } from './errors';

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

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const logLevel = (raw: string, name: string): LogLevel => {
  const v = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v)) throw new AppError('invalid_input', `${name} must be one of ${LOG_LEVELS.join(', ')}`);
  return v as LogLevel;
};

/** A file holding a bearer token for /metrics: at least 16 characters, read once at start. */
const tokenFile = (raw: string, name: string): string => {
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
const trustProxy = (raw: string, name: string): TrustProxy | null => {
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

/**
 * One setting, declared once: the commander options, `--help`, the environment variable, the
 * default and the table in docs/configuration.md are all made from this. The key is the flag's
 * name as commander gives it (camelCase of `--kebab-case`).
 */
interface Setting<T> {
  env: string;
  /** Also read from `<env>_FILE`; never echoed in an error. */
  secret?: boolean;
  parse: (raw: string, name: string) => T;
  fallback: T | (() => T);
  /** What it does (one line: --help and the docs table). */
  help: string;
  /** The value placeholder (`<n>`, `<duration>`); absent for an on/off switch. `[x]`: optional. */
  arg?: string;
  /** The default as a person reads it (`1h`, `on`); absent: none. */
  shown?: string;
  /** `global`: every command takes it; `serve`: the server only; `env`: no flag, environment only. */
  scope: 'global' | 'serve' | 'env';
  /** On by default: the flag is `--no-<name>` and turns it off. */
  negated?: boolean;
  /** The flag may be given several times (comma-separated in the environment). */
  repeatable?: boolean;
}

const bool = (raw: string, name: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new AppError('invalid_input', `${name} must be true or false, got "${raw}"`);
};

const int =
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

const str = (raw: string): string => raw;

const url = (raw: string, name: string): string => {
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
const origins = (raw: string, name: string): readonly string[] => {
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
const linkTemplate = (raw: string, name: string): string | null => {
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
const cookieDomain = (raw: string, name: string): string | null => {
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

const dbUrl = (raw: string, name: string): string | null => {
  if (raw === '' || raw === 'sqlite') return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    // Never echo the value: it may hold a password.
    throw new AppError('invalid_input', `${name} must be a postgres:// URL (or empty for the SQLite default)`);
  }
  return raw;
};

const smtpUrl = (raw: string, name: string): string | null => {
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

const mailbox = (raw: string, name: string): string => {
  if (!/^[^\r\n]{3,300}$/.test(raw) || !raw.includes('@'))
    throw new AppError('invalid_input', `${name} must be an address like "Gatehouse <noreply@example.com>"`);
  return raw;
};

const SETTINGS = {
  dataDir: {
    env: 'GATEHOUSE_DATA_DIR',
    parse: (r: string) => path.resolve(r),
    fallback: () => path.resolve('gatehouse-data'),
    scope: 'global',
    arg: '<dir>',
    shown: './gatehouse-data',
    help: 'data directory: the SQLite file (gatehouse.sqlite, made with mode 0700), the outbox',
  },
  db: {
    env: 'GATEHOUSE_DB',
    secret: true,
    parse: dbUrl,
    fallback: null,
    scope: 'global',
    arg: '<url>',
    shown: 'SQLite',
    help: 'postgres://user@host:port/db to use PostgreSQL instead of SQLite',
  },
  host: { env: 'GATEHOUSE_HOST', parse: str, fallback: '127.0.0.1', scope: 'serve', arg: '<host>', shown: '127.0.0.1', help: 'address to listen on' },
  port: {
    env: 'GATEHOUSE_PORT',
    parse: int(0, 65535),
    fallback: 6336,
    scope: 'serve',
    arg: '<port>',
    shown: '6336',
    help: 'port to listen on, 0 for any free one',
  },
  tokenTtl: {
    env: 'GATEHOUSE_TOKEN_TTL',
    parse: parseDuration,
    fallback: 3600,
    scope: 'serve',
    arg: '<duration>',
    shown: '1h',
    help: 'access-token lifetime (3600, 30m, 24h, 7d); sessions last longer through refresh tokens',
  },
  bcryptCost: {
    env: 'GATEHOUSE_BCRYPT_COST',
    parse: int(4, 31),
    fallback: 11,
    scope: 'serve',
    arg: '<n>',
    shown: '11',
    help: 'bcrypt cost of new hashes (older ones are upgraded at signin)',
  },
  passwordMinLength: {
    env: 'GATEHOUSE_PASSWORD_MIN_LENGTH',
    parse: int(1, 72),
    fallback: 8,
    scope: 'serve',
    arg: '<n>',
    shown: '8',
    help: 'minimum password length in characters',
  },
  publicStatistics: { env: 'GATEHOUSE_PUBLIC_STATISTICS', parse: bool, fallback: false, scope: 'serve', shown: 'off', help: 'serve /statistics to everyone' },
  publicMetrics: { env: 'GATEHOUSE_PUBLIC_METRICS', parse: bool, fallback: false, scope: 'serve', shown: 'off', help: 'serve /metrics to everyone' },
  metricsTokenFile: {
    env: 'GATEHOUSE_METRICS_TOKEN_FILE',
    parse: tokenFile,
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: 'a file holding a bearer token (16+ characters) that may read /metrics, for Prometheus',
  },
  logLevel: {
    env: 'GATEHOUSE_LOG_LEVEL',
    parse: logLevel,
    fallback: 'info',
    scope: 'serve',
    arg: '<level>',
    shown: 'info',
    help: 'debug, info, warn, error or silent; lines below it are dropped',
  },
  publicUrl: {
    env: 'GATEHOUSE_PUBLIC_URL',
    parse: url,
    fallback: '',
    scope: 'serve',
    arg: '<url>',
    shown: 'http://localhost:<port>',
    help: 'the address clients use; links are built from it, never from the Host header (without it: http://localhost:<port> on a loopback --host, http://<host>:<port> otherwise)',
  },
  verifyUrl: {
    env: 'GATEHOUSE_VERIFY_URL',
    parse: linkTemplate,
    fallback: null,
    scope: 'serve',
    arg: '<template>',
    shown: 'the pages',
    help: "your app's verification screen, with {token}: https://app.example.com/verify#token={token}",
  },
  resetUrl: {
    env: 'GATEHOUSE_RESET_URL',
    parse: linkTemplate,
    fallback: null,
    scope: 'serve',
    arg: '<template>',
    shown: 'the pages',
    help: "your app's password-reset screen, with {token}",
  },
  pages: {
    env: 'GATEHOUSE_PAGES',
    parse: bool,
    fallback: true,
    scope: 'serve',
    negated: true,
    shown: 'on',
    help: 'serve no HTML pages (/signin, /signup, /account, …)',
  },
  corsOrigin: {
    env: 'GATEHOUSE_CORS_ORIGIN',
    parse: origins,
    fallback: Object.freeze([]) as readonly string[],
    scope: 'serve',
    arg: '<origin>',
    repeatable: true,
    help: 'a browser origin allowed to call the API, exactly (https://app.example.com); preflights get 204, never credentials; without it, no CORS headers',
  },
  cookieDomain: {
    env: 'GATEHOUSE_COOKIE_DOMAIN',
    parse: cookieDomain,
    fallback: null,
    scope: 'serve',
    arg: '<domain>',
    help: "set the pages' session cookie on this parent domain (example.com): one sign-in opens every app on its subdomains behind forward authentication",
  },
  passkeyRpId: {
    env: 'GATEHOUSE_PASSKEY_RP_ID',
    parse: cookieDomain,
    fallback: null,
    scope: 'serve',
    arg: '<domain>',
    help: "the passkeys' relying-party id: a parent domain of the public URL's host (example.com), so one passkey serves every subdomain; default: the public URL's host",
  },
  trustProxy: {
    env: 'GATEHOUSE_TRUST_PROXY',
    parse: trustProxy,
    fallback: null,
    scope: 'serve',
    arg: '[hops|networks]',
    shown: 'off',
    help: 'behind reverse proxies: how many (1 when given alone), or their networks like 10.0.0.0/8,127.0.0.1; the client address is the first untrusted one from the right of X-Forwarded-For',
  },
  rateLimits: {
    env: 'GATEHOUSE_RATE_LIMITS',
    parse: bool,
    fallback: true,
    scope: 'serve',
    negated: true,
    shown: 'on',
    help: 'turn per-address limits off (benchmarks, trusted networks); per-account ones always apply',
  },
  hashConcurrency: {
    env: 'GATEHOUSE_HASH_CONCURRENCY',
    parse: int(1, 256),
    fallback: () => Math.max(1, os.availableParallelism()),
    scope: 'serve',
    arg: '<n>',
    shown: 'number of cores',
    help: 'password hashes computed at once; the rest wait in a queue',
  },
  busyTimeout: {
    env: 'GATEHOUSE_BUSY_TIMEOUT',
    parse: int(0, 600000),
    fallback: 5000,
    scope: 'env',
    shown: '5000',
    help: 'ms a request waits for a locked store before 503',
  },
  shutdownGrace: {
    env: 'GATEHOUSE_SHUTDOWN_GRACE',
    parse: int(0, 600000),
    fallback: 10000,
    scope: 'env',
    shown: '10000',
    help: 'ms in-flight requests get on SIGTERM/SIGINT',
  },
  smtpUrl: {
    env: 'GATEHOUSE_SMTP_URL',
    secret: true,
    parse: smtpUrl,
    fallback: null,
    scope: 'serve',
    arg: '<url>',
    shown: 'outbox',
    help: 'smtp(s)://user:pass@host:port; without it mail goes to <data-dir>/outbox/*.eml',
  },
  mailFrom: {
    env: 'GATEHOUSE_MAIL_FROM',
    parse: mailbox,
    fallback: 'Gatehouse <gatehouse@localhost>',
    scope: 'serve',
    arg: '<address>',
    shown: 'Gatehouse <gatehouse@localhost>',
    help: 'sender of outgoing mail',
  },
  requireVerifiedEmail: {
    env: 'GATEHOUSE_REQUIRE_VERIFIED_EMAIL',
    parse: bool,
    fallback: false,
    scope: 'serve',
    shown: 'off',
    help: 'refuse signin until the email is verified',
  },
  verificationTtl: {
    env: 'GATEHOUSE_VERIFICATION_TTL',
    parse: parseDuration,
    fallback: 86400,
    scope: 'serve',
    arg: '<duration>',
    shown: '24h',
    help: 'verification link lifetime',
  },
  resetTtl: {
    env: 'GATEHOUSE_RESET_TTL',
    parse: parseDuration,
    fallback: 1800,
    scope: 'serve',
    arg: '<duration>',
    shown: '30m',
    help: 'password reset link lifetime',
  },
  limitWindow: {
    env: 'GATEHOUSE_LIMIT_WINDOW',
    parse: parseDuration,
    fallback: 900,
    scope: 'serve',
    arg: '<duration>',
    shown: '15m',
    help: 'window of the signin, signup and TOTP limits',
  },
  signinFailuresPerAccount: {
    env: 'GATEHOUSE_SIGNIN_FAILURES_PER_ACCOUNT',
    parse: int(1, 1000000),
    fallback: 10,
    scope: 'serve',
    arg: '<n>',
    shown: '10',
    help: 'failed signins for one account from one address before that pair locks',
  },
  signinFailuresPerAccountTotal: {
    env: 'GATEHOUSE_SIGNIN_FAILURES_PER_ACCOUNT_TOTAL',
    parse: int(1, 1000000),
    fallback: 100,
    scope: 'serve',
    arg: '<n>',
    shown: '100',
    help: 'failed signins for one account from all addresses before signins from unfamiliar places wait longer after each failure',
  },
  signinFailuresPerAddress: {
    env: 'GATEHOUSE_SIGNIN_FAILURES_PER_ADDRESS',
    parse: int(1, 1000000),
    fallback: 100,
    scope: 'serve',
    arg: '<n>',
    shown: '100',
    help: 'failed signins per client address',
  },
  signupsPerAddress: {
    env: 'GATEHOUSE_SIGNUPS_PER_ADDRESS',
    parse: int(1, 1000000),
    fallback: 100,
    scope: 'serve',
    arg: '<n>',
    shown: '100',
    help: 'signup attempts per client address',
  },
  totpFailuresPerAccount: {
    env: 'GATEHOUSE_TOTP_FAILURES_PER_ACCOUNT',
    parse: int(1, 1000000),
    fallback: 5,
    scope: 'serve',
    arg: '<n>',
    shown: '5',
    help: 'failed codes before the second factor locks',
  },
  resetRequestsPerAccount: {
    env: 'GATEHOUSE_RESET_REQUESTS_PER_ACCOUNT',
    parse: int(1, 1000000),
    fallback: 3,
    scope: 'serve',
    arg: '<n>',
    shown: '3',
    help: 'password reset requests per account',
  },
  resetWindow: {
    env: 'GATEHOUSE_RESET_WINDOW',
    parse: parseDuration,
    fallback: 3600,
    scope: 'serve',
    arg: '<duration>',
    shown: '1h',
    help: 'window of the reset request limit',
  },
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
/** Raw values as given on the command line (strings or booleans from commander). */
export type Flags = Partial<Record<SettingName, string | boolean | number | readonly string[] | undefined>>;

const flagName = (key: string) => '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

/** A setting as a command-line option: what commander is given (cli/main.ts adds them). */
export interface SettingOption {
  key: SettingName;
  /** `--port <port>`, `--no-pages`, `--trust-proxy [hops|networks]`. */
  flags: string;
  description: string;
  repeatable: boolean;
}

const envNames = (s: Setting<unknown>) =>
  s.secret ? `${s.env}, ${s.env}_FILE` : s.repeatable ? `${s.env}, comma-separated` : s.negated ? `${s.env}=false` : s.env;

/** The options of one scope, in declaration order, each with its environment variable and default in the help. */
export function settingOptions(scope: 'global' | 'serve'): SettingOption[] {
  return (Object.entries(SETTINGS) as Array<[SettingName, Setting<unknown>]>)
    .filter(([, s]) => s.scope === scope)
    .map(([key, s]) => {
      const flag = s.negated ? flagName(key).replace(/^--/, '--no-') : flagName(key);
      const shown = s.shown === undefined || s.negated ? '' : ` (default ${s.shown})`;
      return {
        key,
        flags: s.arg ? `${flag} ${s.arg}` : flag,
        description: `${s.help}${s.repeatable ? ' (repeatable)' : ''}${shown} [env ${envNames(s)}]`,
        repeatable: s.repeatable === true,
      };
    });
}

/** The Markdown table of every setting (docs/configuration.md holds a copy; a test keeps them equal). */
export function settingsTable(): string {
  const rows = (Object.entries(SETTINGS) as Array<[SettingName, Setting<unknown>]>).map(([key, s]) => {
    const flag = s.scope === 'env' ? '' : `\`${s.negated ? flagName(key).replace(/^--/, '--no-') : flagName(key)}\``;
    const env = envNames(s)
      .split(', ')
      .map((e) => (e === 'comma-separated' ? e : `\`${e}\``))
      .join(', ');
    const cell = (v: string) => v.replace(/\|/g, '\\|').replace(/</g, '&lt;');
    const shown = s.shown === undefined ? 'none' : /^[a-z ]+$/i.test(s.shown) ? s.shown : `\`${s.shown}\``;
    return `| ${flag} | ${env} | ${shown} | ${cell(s.help)} |`;
  });
  return ['| flag | environment | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
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
