/**
 * The client's address behind reverse proxies. X-Forwarded-For is a list each proxy appends to,
 * so only its right end was written by machines we trust: the address is taken from the right,
 * skipping exactly the trusted proxies (a number of hops, or the networks they live in). The
 * left end is whatever the client wrote and is never believed on its own.
 */
import net from 'node:net';
import type { TrustProxy } from '../config';

const plain = (address: string): string => (address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address);

/** BlockLists are built once per setting, not per request. */
const lists = new WeakMap<readonly string[], net.BlockList>();
function blockListOf(networks: readonly string[]): net.BlockList {
  let list = lists.get(networks);
  if (!list) {
    list = new net.BlockList();
    for (const n of networks) {
      const [address, prefix] = n.split('/');
      const type = net.isIPv6(address) ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(address, type);
      else list.addSubnet(address, Number(prefix), type);
    }
    lists.set(networks, list);
  }
  return list;
}

export function clientAddress(peer: string, forwardedFor: string, trust: TrustProxy | null): string {
  const socket = plain(peer);
  if (!trust || forwardedFor === '') return socket;
  // Right to left: the peer, then what each proxy says it was handed.
  const chain = [
    socket,
    ...forwardedFor
      .split(',')
      .map((a) => plain(a.trim()))
      .reverse(),
  ];
  if ('hops' in trust) {
    // N proxies in front: the address the outermost of them saw is N entries from the right.
    for (let i = 1; i <= trust.hops && i < chain.length; i++) if (!net.isIP(chain[i])) return chain[i - 1];
    return chain[Math.min(trust.hops, chain.length - 1)];
  }
  const trusted = blockListOf(trust.networks);
  const isTrusted = (a: string) => net.isIP(a) !== 0 && trusted.check(a, net.isIPv6(a) ? 'ipv6' : 'ipv4');
  let i = 0;
  while (i < chain.length - 1 && isTrusted(chain[i])) {
    // Something that is not an address was written by the proxy at i (or by the client through it).
    if (!net.isIP(chain[i + 1])) return chain[i];
    i++;
  }
  return chain[i];
}

/** Whether the direct peer is one of the trusted proxies (any peer when trusted by hop count). */
export function peerTrusted(peer: string, trust: TrustProxy | null): boolean {
  if (!trust) return false;
  if ('hops' in trust) return true;
  const a = plain(peer);
  return net.isIP(a) !== 0 && blockListOf(trust.networks).check(a, net.isIPv6(a) ? 'ipv6' : 'ipv4');
}
