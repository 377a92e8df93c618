/**
 * Where Gatehouse may send a request of its own. Every such address (webhook URLs, SCIM push
 * targets, back-channel logout URIs, upstream issuers, directory sources, SP metadata the shell
 * fetches), and every address it sends a browser to with a message (a SAML service provider's ACS
 * and logout URLs: browserUrl), passes outboundUrl: no user or password in it, in any spelling,
 * nothing unseen inside. Webhooks, SCIM push targets and
 * back-channel logout URIs are also held to the network rule: a target inside the network
 * (loopback, private, link-local, unique-local, unspecified, multicast or reserved, and IPv6 that
 * carries such an IPv4 address: config/address-ranges.ts classifies them all) is refused unless
 * the operator names it with --webhook-allow-private (`loopback`, `private`, `link-local`,
 * `unique-local`, an address or a CIDR block). That rule is checked twice: when a URL is added
 * (its literal address, or every address its name resolves to), and on the address a socket
 * actually dials, so a name that resolves elsewhere later (DNS rebinding) is still refused.
 */
import dns from 'node:dns';
import net from 'node:net';
import { AppError } from '../errors';
import { refusedKind, type TargetPolicy } from '../config/address-ranges';

export { targetPolicy, type TargetPolicy } from '../config/address-ranges';

/**
 * How an operator allows what is refused: the setting's flag and its environment variable, written
 * out in every front end (a setting is no field of the form or file that named the address, so it
 * is never a {--mark} the front end would word as one of its own).
 */
const ALLOW = (value: string) => `(--webhook-allow-private ${value}, or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=${value})`;

/** A refused target, as a delivery's last error says it. */
export class TargetRefused extends Error {
  constructor(
    readonly kind: string,
    readonly address: string,
  ) {
    super(`refused: ${address} is a ${kind} address (allowed only by --webhook-allow-private, or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE)`);
  }
}

/**
 * The refusal of an address inside the network: `subject` (a field's {--mark}, or a file's
 * position and the host) is or resolves to `address`, of `kind`; how to allow exactly that.
 */
export function insideNetwork(subject: string, host: string, address: string, kind: string): AppError {
  const allow = kind === 'unique-local' || kind === 'reserved' || kind === 'unspecified' ? address : kind;
  return new AppError(
    'invalid_input',
    `${subject} ${host === address ? 'is' : `resolves to ${address},`} ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address: Gatehouse does not send requests inside the network unless the operator allows it ${ALLOW(allow)}`,
  );
}

/** Names that are loopback by definition (RFC 6761: `localhost` and every name under it), resolved or not. */
const LOOPBACK_NAME = /^(?:(?:[^.]+\.)*localhost|localhost\.localdomain)\.?$/i;

/**
 * Checks a target URL when it is added: a literal address (the URL parser has already read
 * `2130706433`, `0177.0.0.1` and `0x7f.1` as 127.0.0.1), or every address its name resolves to
 * (`localhost` and names under it are loopback, resolved or not). Another name that does not
 * resolve is accepted: the check at connection time still holds.
 */
export async function checkTargetUrl(url: URL, policy: TargetPolicy, flag: string): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else if (LOOPBACK_NAME.test(host)) addresses = ['127.0.0.1'];
  else {
    try {
      addresses = (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      return;
    }
  }
  for (const address of addresses) {
    const kind = refusedKind(address, policy);
    if (kind !== null) throw insideNetwork(flag, host, address, kind);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;
/** The resolver's shape (dns.lookup asked for every address); a test passes its own answers. */
export type Resolve = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for http.request that refuses a name resolving inside the network: every address
 * the resolver gives is checked before any is dialled (not only the first: the socket may try
 * them all).
 */
export function guardedLookup(policy: TargetPolicy, resolve: Resolve = dns.lookup) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      for (const a of addresses) {
        const kind = refusedKind(a.address, policy);
        if (kind !== null) return callback(Object.assign(new TargetRefused(kind, a.address), { code: 'ETARGETREFUSED' }), []);
      }
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/** What an entry point accepts beyond the one rule. */
export interface OutboundRule {
  /** Its schemes, in the order a refusal lists them (default: http and https). */
  protocols?: readonly string[];
  /** A URL it takes, for the refusal of what is not one. */
  example?: string;
  /** What proves who is asking instead of a user and password (said when one is refused). */
  proof?: string;
}

/** `http:`, `https:` → "http(s)"; other lists joined with "or". */
const schemeWords = (protocols: readonly string[]) => {
  const names = protocols.map((p) => p.replace(/:$/, ''));
  return names.length === 2 && names[1] === `${names[0]}s` ? `${names[0]}(s)` : names.join(' or ');
};

/** Characters no address shows: controls (a URL parser deletes tab and newline), format characters (zero-width, bidi) and spaces. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Z}]/u;
/** The form every address is written in: `scheme://host…` (not `https:host`, `https:\\host` or `https:///host`, which parsers read as one). */
const WRITTEN_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/\\]/i;

/**
 * The authority as a URL parser finds it however the address is spelt (after the scheme, past
 * any `/` or `\`, up to the path, query or fragment): an `@` there, even with nothing before it
 * (`user@`, `:@`), is a user and password.
 */
function writtenAuthority(raw: string): string {
  const rest = raw.replace(/^[a-z][a-z0-9+.-]*:/i, '').replace(/^[/\\]+/, '');
  return /^[^/\\?#]*/.exec(rest)![0];
}

/**
 * THE rule of every address Gatehouse sends requests to, and of those it sends browsers to with
 * a message (a SAML service provider's ACS and logout URLs: samlEndpointUrl): an absolute URL of
 * one of the entry point's schemes, written `scheme://host…`, with no user or password in any
 * spelling (`user:pw@`, `user@`, `:@`, after `https:\\` or `https:`), no control character,
 * invisible character or space (a parser silently drops a tab or a newline, so what is stored
 * would not be what is used), and no #fragment. An address is stored, listed, shown in the
 * console and written by `config export` as it is, so a password in it would be printed wherever
 * the address is; each of these targets has its own proof of who is asking (a signature, a
 * token, a secret setting). The raw value is never echoed: it may hold that password.
 * `field` is the entry point's {--mark} (or words such as "the URL").
 */
export function outboundUrl(raw: string, field: string, rule: OutboundRule = {}): URL {
  const protocols = rule.protocols ?? ['http:', 'https:'];
  const example = rule.example ?? `${protocols.at(-1)}//app.example.com/…`;
  if (UNSEEN.test(raw)) throw new AppError('invalid_input', `${field} must not contain spaces, control or invisible characters`);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('invalid_input', `${field} must be an absolute ${schemeWords(protocols)} URL such as ${example}`);
  }
  if (!protocols.includes(u.protocol))
    throw new AppError('invalid_input', `${field} must be ${protocols.map((p) => p.replace(/:$/, '')).join(' or ')}, not ${u.protocol.replace(/:$/, '')}`);
  if (u.username || u.password || writtenAuthority(raw).includes('@')) {
    throw new AppError(
      'invalid_input',
      `${field} must carry no user or password (user:password@ before the host): the address is stored and shown as written${rule.proof ? `; ${rule.proof}` : ''}`,
    );
  }
  if (!WRITTEN_FORM.test(raw)) throw new AppError('invalid_input', `${field} must be written ${u.protocol}//host/…, such as ${example}`);
  if (u.hash) throw new AppError('invalid_input', `${field} must not have a #fragment`);
  return u;
}

/** Hosts a browser reaches on the machine it runs on: plain http is allowed there. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * An address Gatehouse sends a person's browser to with a message (a SAML service provider's
 * Assertion Consumer Service and logout URLs): the one rule above, https (http only on a
 * loopback host, or when `plainHttp`: Gatehouse itself is served over http), at most 1,000
 * characters, and returned as written (the SP compares it exactly with the one it asks for). The
 * network rule does not apply: the browser connects, not Gatehouse, and an app on an internal
 * host is an ordinary case.
 */
export function browserUrl(raw: string, field: string, rule: OutboundRule & { plainHttp?: boolean } = {}): string {
  if (raw.length > 1000) throw new AppError('invalid_input', `${field} must be at most 1000 characters`);
  const u = outboundUrl(raw, field, { ...rule, protocols: ['http:', 'https:'] });
  if (u.protocol !== 'https:' && !LOOPBACK_HOSTS.has(u.hostname) && rule.plainHttp !== true)
    throw new AppError('invalid_input', `${field} must be https (http only for localhost)`);
  return raw;
}

/** A webhook's or SCIM push target's URL: the one rule, at most 2,000 characters. */
export function parseWebhookUrl(raw: string): string {
  const value = raw.trim();
  const u = outboundUrl(value, '{--url}', { example: 'https://hooks.example.com/gatehouse', proof: 'the receiver checks the signature or token instead' });
  if (value.length > 2000) throw new AppError('invalid_input', '{--url} is at most 2,000 characters');
  return u.toString();
}

/**
 * An address as it may be shown when it was stored by a version that let a user or password
 * through: both replaced by `***` (a user name may be a token too). Applied again as written
 * (an exported file), `***@` is refused by outboundUrl like any other user.
 */
export function withoutUserinfo(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  if (!u.username && !u.password) return url;
  u.username = '***';
  u.password = '';
  return u.href;
}

/** A query parameter's name as it may be shown: a plain name, else hidden too (`?secret-token` has no value, only a name). */
const shownKey = (key: string) => (/^[\w.-]{1,40}$/.test(key) ? key : '…');

/** A URL as it is shown: query values hidden (they are often keys). */
export function shownUrl(url: string): string {
  const u = new URL(withoutUserinfo(url));
  return u.search ? `${u.origin}${u.pathname}?${[...u.searchParams.keys()].map((k) => `${shownKey(k)}=…`).join('&')}` : u.toString();
}
