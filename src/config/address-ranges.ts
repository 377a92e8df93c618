/**
 * The one classifier of addresses Gatehouse sends requests of its own to (webhooks, SCIM push
 * targets): which are inside the network, and so refused unless the operator allows them
 * (`--webhook-allow-private`). Parsed with the settings (a typo refuses to start); the checks that
 * use it, when a URL is added and on every address dialled, are in runtime/targets.ts.
 *
 * IPv4 is judged against IANA's special-purpose registry. IPv6 is judged by what it carries: an
 * address with an IPv4 address inside (mapped `::ffff:0:0/96`, translated `::ffff:0:0:0/96`,
 * compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is that IPv4 address, so
 * `[::127.0.0.1]` (which the URL parser writes `[::7f00:1]`) is loopback; the rest must be global
 * unicast (2000::/3) outside the blocks that are not (Teredo and the other IETF assignments in
 * 2001::/23, documentation).
 */
import net from 'node:net';
import { AppError } from '../errors';

type Family = 'ipv4' | 'ipv6';

/**
 * The address ranges a target may not be in by default, by the name an operator allows them with.
 * IPv6 outside 2000::/3 that no entry names is `reserved` too (ipv6Kind).
 */
const RANGES: Record<string, Array<[string, number, Family]>> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  private: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['100.64.0.0', 10, 'ipv4'], // carrier-grade NAT, shared address space (RFC 6598)
  ],
  'link-local': [
    ['169.254.0.0', 16, 'ipv4'], // cloud metadata services live here (169.254.169.254)
    ['fe80::', 10, 'ipv6'],
  ],
  'unique-local': [
    ['fc00::', 7, 'ipv6'],
    ['fec0::', 10, 'ipv6'], // site-local, the deprecated forerunner of unique-local (RFC 3879): still routed inside some networks
  ],
  unspecified: [
    ['0.0.0.0', 8, 'ipv4'], // "this network": Linux dials 0.0.0.0 as the machine itself
    ['::', 128, 'ipv6'],
  ],
  reserved: [
    ['192.0.0.0', 24, 'ipv4'], // IETF protocol assignments (NAT64 discovery, DS-Lite…)
    ['192.0.2.0', 24, 'ipv4'], // documentation (TEST-NET-1)
    ['192.88.99.0', 24, 'ipv4'], // the 6to4 relay anycast, deprecated
    ['198.18.0.0', 15, 'ipv4'], // benchmarking (RFC 2544), also used by lab networks and proxies' fake-IP modes
    ['198.51.100.0', 24, 'ipv4'], // documentation (TEST-NET-2)
    ['203.0.113.0', 24, 'ipv4'], // documentation (TEST-NET-3)
    ['224.0.0.0', 4, 'ipv4'], // multicast
    ['240.0.0.0', 4, 'ipv4'], // reserved, and the broadcast address 255.255.255.255
    ['ff00::', 8, 'ipv6'], // multicast
    ['64:ff9b:1::', 48, 'ipv6'], // local-use NAT64 (RFC 8215): a prefix of this network's own translator
    ['2001::', 23, 'ipv6'], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID…
    ['2001:db8::', 32, 'ipv6'], // documentation
    ['3fff::', 20, 'ipv6'], // documentation (RFC 9637)
  ],
};
export const ADDRESS_KINDS = Object.keys(RANGES);

/** The operator's exceptions, parsed once from `--webhook-allow-private`. */
export interface TargetPolicy {
  allowed: net.BlockList;
  /** As given, for messages. */
  names: readonly string[];
}

/** Parses `--webhook-allow-private` values: range names, addresses or CIDR blocks. */
export function targetPolicy(entries: readonly string[]): TargetPolicy {
  const allowed = new net.BlockList();
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    // The table's own names only: `constructor` (a name every object inherits) is no range.
    if (Object.hasOwn(RANGES, entry)) {
      for (const [address, prefix, type] of RANGES[entry]) allowed.addSubnet(address, prefix, type);
      continue;
    }
    const [address, prefix, extra] = entry.split('/');
    const type = net.isIP(address);
    const bits = prefix === undefined ? (type === 6 ? 128 : 32) : Number(prefix);
    if (type === 0 || extra !== undefined || !/^\d{1,3}$/.test(String(bits)) || bits > (type === 6 ? 128 : 32))
      throw new AppError('invalid_input', `--webhook-allow-private takes ${ADDRESS_KINDS.join(', ')}, an address or a CIDR block (10.1.2.0/24), got "${raw}"`);
    allowed.addSubnet(address, bits, type === 6 ? 'ipv6' : 'ipv4');
  }
  return { allowed, names: entries };
}

/** Each kind's ranges as a BlockList per address family, built once (refusedKind runs for every request sent). */
const KIND_LISTS: ReadonlyArray<[string, Record<Family, net.BlockList>]> = Object.entries(RANGES).map(([kind, ranges]) => {
  const lists = { ipv4: new net.BlockList(), ipv6: new net.BlockList() };
  for (const [a, p, t] of ranges) lists[t].addSubnet(a, p, t);
  return [kind, lists];
});

/** The kind of range a plain address is in by the table alone, or null. */
function listedKind(address: string, family: Family): string | null {
  for (const [kind, lists] of KIND_LISTS) if (lists[family].check(address, family)) return kind;
  return null;
}

/** An IPv6 address (already valid by net.isIPv6) as its eight 16-bit words, `::` and a trailing dotted quad expanded. */
function ipv6Words(address: string): number[] {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const front = words(head);
  const back = words(tail);
  return tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 address an IPv6 address carries by a fixed rule, or null (see the header comment). */
function embeddedIpv4(w: number[]): string | null {
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && w[5] === 0xffff) return dotted(w[6], w[7]); // ::ffff:a.b.c.d, mapped
  if (zero(0, 4) && w[4] === 0xffff && w[5] === 0) return dotted(w[6], w[7]); // ::ffff:0:a.b.c.d, translated (SIIT)
  if (zero(0, 6) && (w[6] !== 0 || w[7] > 1)) return dotted(w[6], w[7]); // ::a.b.c.d, compatible (deprecated); not :: or ::1
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return dotted(w[6], w[7]); // 64:ff9b::a.b.c.d, NAT64's well-known prefix
  if (w[0] === 0x2002) return dotted(w[1], w[2]); // 2002:aabb:ccdd::/48, 6to4
  return null;
}

/**
 * What an address is: its kind (`loopback`…) when it is inside the network, or null when it is
 * public; `ipv4` is the IPv4 address an IPv6 one carries, for the operator's exceptions.
 */
function classify(address: string): { kind: string | null; ipv4: string | null } {
  if (net.isIPv4(address)) return { kind: listedKind(address, 'ipv4'), ipv4: null };
  const words = ipv6Words(address);
  const ipv4 = embeddedIpv4(words);
  if (ipv4 !== null) {
    const kind = listedKind(ipv4, 'ipv4');
    // RFC 4291 deprecated the compatible form: nothing public is reached by it.
    const compatible = words.slice(0, 6).every((x) => x === 0);
    return { kind: kind ?? (compatible ? 'reserved' : null), ipv4 };
  }
  const kind = listedKind(address, 'ipv6');
  // Only 2000::/3 is global unicast; the rest (::/8, 100::/64 discard, 5f00::/16 SRv6…) is not for us to dial.
  return { kind: kind ?? ((words[0] & 0xe000) === 0x2000 ? null : 'reserved'), ipv4: null };
}

/**
 * An address as the URL parser reads a host (`2130706433`, `0x7f.1`, `127.1` and `0177.0.0.1` are
 * 127.0.0.1; IPv6 in any spelling), brackets and a zone id (`%eth0`) dropped; null when it is no address.
 */
export function canonicalAddress(host: string): string | null {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');
  if (net.isIPv4(bare)) return bare;
  let parsed: string;
  try {
    parsed = new URL(`http://${net.isIPv6(bare) ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
  return net.isIP(parsed) !== 0 ? parsed : null;
}

/** The kind of range `ip` is in (`loopback`, `private`…), ignoring any exception; null when it is public, `unknown` when it is no address. */
export function addressKind(ip: string): string | null {
  const address = canonicalAddress(ip);
  return address === null ? 'unknown' : classify(address).kind;
}

/** The kind of range `ip` is in when the policy does not allow it (`loopback`…), or null when it may be dialled. */
export function refusedKind(ip: string, policy: TargetPolicy): string | null {
  const address = canonicalAddress(ip);
  if (address === null) return 'unknown';
  const { kind, ipv4 } = classify(address);
  if (kind === null) return null;
  // An exception covers the address as written or the IPv4 address it carries (`loopback` covers `::ffff:127.0.0.1`).
  if (policy.allowed.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4')) return null;
  if (ipv4 !== null && policy.allowed.check(ipv4, 'ipv4')) return null;
  return kind;
}
