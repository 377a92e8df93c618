/**
 * Where Gatehouse may send a request of its own: webhook URLs and SCIM push targets. A target
 * inside the network (loopback, private, link-local, unique-local, unspecified, multicast or
 * reserved, and IPv6 that carries such an IPv4 address: config/address-ranges.ts classifies them
 * all) is refused unless the operator names it in the webhook-allow-private setting (`loopback`,
 * `private`, `link-local`, `unique-local`, an address or a CIDR block). The rule is checked twice:
 * when a URL is added (its literal address, or every address its name resolves to), and on the
 * address a socket actually dials, so a name that resolves elsewhere later (DNS rebinding) is
 * still refused.
 */
import dns from 'node:dns';
import net from 'node:net';
import { AppError } from '../errors';
import { refusedKind, type TargetPolicy } from '../config/address-ranges';

export { targetPolicy, type TargetPolicy } from '../config/address-ranges';

/** A refused target, as a delivery's last error says it. */
export class TargetRefused extends Error {
  constructor(
    readonly kind: string,
    readonly address: string,
  ) {
    super(`refused: ${address} is a ${kind} address (allowed only by the webhook-allow-private setting)`);
  }
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
    if (kind !== null)
      throw new AppError(
        'invalid_input',
        `${flag} ${host === address ? 'is' : `resolves to ${address},`} ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address: Gatehouse does not send requests inside the network unless the operator allows it ({--webhook-allow-private} ${kind === 'unique-local' || kind === 'reserved' || kind === 'unspecified' ? address : kind})`,
      );
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

/** Only http(s), no credentials in the URL (the signature or token proves who sends), at most 2,000 characters. */
export function parseWebhookUrl(raw: string): string {
  const value = raw.trim();
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new AppError('invalid_input', '{--url} must be an absolute http(s) URL such as https://hooks.example.com/gatehouse');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new AppError('invalid_input', `{--url} must be http or https, not ${u.protocol.replace(':', '')}`);
  if (u.username || u.password) throw new AppError('invalid_input', '{--url} must carry no user or password: the receiver checks the signature instead');
  if (u.hash) throw new AppError('invalid_input', '{--url} must have no #fragment');
  if (value.length > 2000) throw new AppError('invalid_input', '{--url} is at most 2,000 characters');
  return u.toString();
}

/** A URL as it is shown: query values hidden (they are often keys). */
export function shownUrl(url: string): string {
  const u = new URL(url);
  return u.search ? `${u.origin}${u.pathname}?${[...u.searchParams.keys()].map((k) => `${k}=…`).join('&')}` : u.toString();
}
