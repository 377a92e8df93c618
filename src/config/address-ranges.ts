/**
 * The address ranges Gatehouse sends no request of its own to unless the operator allows them
 * (`--webhook-allow-private`): loopback, private, link-local, unique-local, unspecified,
 * multicast and reserved. Parsed with the settings (a typo refuses to start); the checks that use
 * it are in deliveries/targets.ts.
 */
import net from 'node:net';
import { AppError } from '../errors';

/** The address ranges a target may not be in by default, by the name an operator allows them with. */
const RANGES: Record<string, Array<[string, number, 'ipv4' | 'ipv6']>> = {
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
  'unique-local': [['fc00::', 7, 'ipv6']],
  unspecified: [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ],
  reserved: [
    ['224.0.0.0', 3, 'ipv4'], // multicast, the reserved block and broadcast
    ['ff00::', 8, 'ipv6'],
    ['64:ff9b::', 96, 'ipv6'], // NAT64: an IPv4 address in disguise
    ['2002::', 16, 'ipv6'], // 6to4: likewise
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
    if (RANGES[entry]) {
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

/** An IPv4 address inside IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) as IPv4. */
function unmapped(ip: string): string {
  const m = /^::ffff:(?:0:)?(.+)$/i.exec(ip);
  if (!m) return ip;
  if (net.isIPv4(m[1])) return m[1];
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(m[1]);
  if (!hex) return ip;
  const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The kind of range `ip` is in when the policy does not allow it (`loopback`…), or null when it may be dialled. */
export function refusedKind(ip: string, policy: TargetPolicy): string | null {
  const address = unmapped(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const type = net.isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (net.isIP(address) === 0) return 'unknown';
  if (policy.allowed.check(address, type)) return null;
  for (const [kind, lists] of KIND_LISTS) if (lists[type].check(address, type)) return kind;
  return null;
}

/** Each kind's ranges as a BlockList per address family, built once (refusedKind runs for every webhook sent). */
const KIND_LISTS: ReadonlyArray<[string, Record<'ipv4' | 'ipv6', net.BlockList>]> = Object.entries(RANGES).map(([kind, ranges]) => {
  const lists = { ipv4: new net.BlockList(), ipv6: new net.BlockList() };
  for (const [a, p, t] of ranges) lists[t].addSubnet(a, p, t);
  return [kind, lists];
});
