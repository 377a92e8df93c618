/**
 * Every setting, declared once: the commander options, `--help`, the environment variable, the
 * default and the table in docs/configuration.md are all made from this table.
 */
import os from 'node:os';
import path from 'node:path';
import {
  allowPrivate,
  bool,
  cookieDomain,
  dbUrl,
  int,
  ldapDn,
  linkTemplate,
  logLevel,
  mailbox,
  names,
  origins,
  parseDuration,
  pemFile,
  smtpUrl,
  str,
  tokenFile,
  trustProxy,
  url,
} from './parsers';
import type { LogLevel } from './parsers';
import { brandColor, brandCss, brandLogo, brandName, type BrandLogo } from './brand';
import { language, messagesFile, type Language, type MessageOverrides } from './languages';

/**
 * One setting, declared once: the commander options, `--help`, the environment variable, the
 * default and the table in docs/configuration.md are all made from this. The key is the flag's
 * name as commander gives it (camelCase of `--kebab-case`).
 */
export interface Setting<T> {
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

export const SETTINGS = {
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
  config: {
    env: 'GATEHOUSE_CONFIG',
    parse: (r: string) => path.resolve(r),
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: 'a configuration file (YAML: gatehouse config) applied before listening; an invalid one stops the start',
  },
  signinByMail: {
    env: 'GATEHOUSE_SIGNIN_BY_MAIL',
    parse: bool,
    fallback: false,
    scope: 'serve',
    shown: 'off',
    help: 'turn on sign-in by a mailed code as the server starts (the signin_by_mail action opened to guests; the console and a configuration file turn it off)',
  },
  brandName: {
    env: 'GATEHOUSE_BRAND_NAME',
    parse: brandName as (raw: string, name: string) => string | null,
    // None given: the configuration file's or the console's, else Gatehouse (src/look.ts).
    fallback: null,
    scope: 'serve',
    arg: '<name>',
    shown: 'Gatehouse',
    help: 'the product name the pages show (in the header and the window title)',
  },
  brandLogo: {
    env: 'GATEHOUSE_BRAND_LOGO',
    parse: brandLogo as (raw: string, name: string) => BrandLogo | null,
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: 'a logo shown beside the name: a PNG or SVG file of at most 256 KiB (an SVG without script, event handlers, foreignObject or outside references), served at /assets/brand-logo',
  },
  brandColor: {
    env: 'GATEHOUSE_BRAND_COLOR',
    parse: brandColor as (raw: string, name: string) => string | null,
    fallback: null,
    scope: 'serve',
    arg: '<#RRGGBB>',
    help: "the pages' accent colour (buttons, links, focus rings), as #RRGGBB",
  },
  brandCss: {
    env: 'GATEHOUSE_BRAND_CSS',
    parse: brandCss as (raw: string, name: string) => string | null,
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: "a stylesheet of at most 64 KiB loaded after Gatehouse's own on every page, served at /assets/brand.css (the pages' CSP still allows nothing from elsewhere)",
  },
  defaultLanguage: {
    env: 'GATEHOUSE_DEFAULT_LANGUAGE',
    parse: language as (raw: string, name: string) => Language | null,
    // None given: the configuration file's or the console's, else English (src/look.ts).
    fallback: null,
    scope: 'serve',
    arg: '<en|de|fr>',
    shown: 'en',
    help: "the pages' and mails' language when neither the reader's browser (Accept-Language) nor their account names one Gatehouse has",
  },
  messages: {
    env: 'GATEHOUSE_MESSAGES',
    parse: messagesFile as (raw: string, name: string) => MessageOverrides | null,
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: "a JSON or YAML file of the operator's own wording: for each language (en, de, fr) a map of message key to text (plain text, shown escaped); see docs/branding-and-languages.md",
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
    fallback: 'info' as LogLevel,
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
  webhookAllowPrivate: {
    env: 'GATEHOUSE_WEBHOOK_ALLOW_PRIVATE',
    parse: allowPrivate,
    fallback: Object.freeze([]) as readonly string[],
    scope: 'global',
    arg: '<range>',
    repeatable: true,
    shown: 'none',
    help: 'webhook (and SCIM push) targets Gatehouse may send to inside the network: loopback, private, link-local, unique-local, an address or a CIDR block (10.1.2.0/24); the rest is refused',
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
  recentSignin: {
    env: 'GATEHOUSE_RECENT_SIGNIN',
    parse: parseDuration,
    fallback: 600,
    scope: 'serve',
    arg: '<duration>',
    shown: '10m',
    help: 'how recent a sign-in (or a password or code entered again) must be to add a way in (a passkey, API key, app password, TOTP, a new email) or to make a SCIM token or an invitation',
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
  samlRequestsPerAddress: {
    env: 'GATEHOUSE_SAML_REQUESTS_PER_ADDRESS',
    parse: int(1, 1000000),
    fallback: 1000,
    scope: 'serve',
    arg: '<n>',
    shown: '1000',
    help: 'SAML sign-in requests per client address (each keeps a sign-in in progress in the store)',
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
  ldapPort: {
    env: 'GATEHOUSE_LDAP_PORT',
    parse: int(0, 65535) as (raw: string, name: string) => number | null,
    fallback: null,
    scope: 'serve',
    arg: '<port>',
    help: 'serve a read-only LDAP directory on this port (same --host; StartTLS with --ldap-tls-cert); off unless given; see docs/ldap.md',
  },
  ldapsPort: {
    env: 'GATEHOUSE_LDAPS_PORT',
    parse: int(0, 65535) as (raw: string, name: string) => number | null,
    fallback: null,
    scope: 'serve',
    arg: '<port>',
    help: 'serve the LDAP directory over TLS (LDAPS) on this port; needs --ldap-tls-cert and --ldap-tls-key',
  },
  ldapTlsCert: {
    env: 'GATEHOUSE_LDAP_TLS_CERT',
    parse: pemFile('certificate'),
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: "the LDAP directory's certificate chain (PEM), for LDAPS and StartTLS",
  },
  ldapTlsKey: {
    env: 'GATEHOUSE_LDAP_TLS_KEY',
    secret: true,
    parse: pemFile('private key'),
    fallback: null,
    scope: 'serve',
    arg: '<file>',
    help: "the certificate's private key (PEM file, readable by the service only)",
  },
  ldapBaseDn: {
    env: 'GATEHOUSE_LDAP_BASE_DN',
    parse: ldapDn,
    fallback: '',
    scope: 'serve',
    arg: '<dn>',
    shown: 'from the public URL',
    help: "the directory's base DN (dc=example,dc=com); default: the dc= parts of the public URL's domain",
  },
  ldapReaders: {
    env: 'GATEHOUSE_LDAP_READERS',
    parse: names,
    fallback: Object.freeze([]) as readonly string[],
    scope: 'serve',
    arg: '<group>',
    repeatable: true,
    help: "a managed group whose members may search the directory (an app's bind account); administrators always may",
  },
  posixIdBase: {
    env: 'GATEHOUSE_POSIX_ID_BASE',
    parse: int(1000, 2_000_000_000) as (raw: string, name: string) => number | null,
    fallback: null,
    scope: 'serve',
    arg: '<n>',
    shown: '10000',
    help: "the first uidNumber and gidNumber the directory gives (at least 1000, below Linux's system accounts' range ends); kept in the store: a base that would meet numbers already given is refused",
  },
  ldapAllowInsecureBind: {
    env: 'GATEHOUSE_LDAP_ALLOW_INSECURE_BIND',
    parse: bool,
    fallback: false,
    scope: 'serve',
    shown: 'off',
    help: 'accept LDAP binds in clear text from addresses other than loopback (a trusted network only)',
  },
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
/** The value a setting holds once read: what its parser returns, or its fallback. */
type ValueOf<S> = S extends { parse: (raw: string, name: string) => infer T; fallback: infer F } ? T | (F extends () => infer R ? R : F) : never;
/** Every setting's value, typed from the table above: a new setting is one entry there and nothing else. */
export type SettingValues = { readonly [K in SettingName]: ValueOf<(typeof SETTINGS)[K]> };
/** Raw values as given on the command line (strings or booleans from commander). */
export type Flags = Partial<Record<SettingName, string | boolean | number | readonly string[] | undefined>>;

export const flagName = (key: string) => '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

/** A setting as a command-line option: what commander is given (cli/main.ts adds them). */
export interface SettingOption {
  key: SettingName;
  /** `--port <port>`, `--no-pages`, `--trust-proxy [hops|networks]`. */
  flags: string;
  description: string;
  repeatable: boolean;
}

export const envNames = (s: Setting<unknown>) =>
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
