/**
 * A session's device as a person reads it: the browser and system a User-Agent names ("Firefox on
 * Windows", "Safari on iOS"), and the place its address stands for (IPv4 by /24, IPv6 by /64).
 * The parsing is bowser's (MIT, small, maintained; ua-parser-js 2 is AGPL), loaded at the first
 * use: an idle server never holds it.
 */
import { addressGroup } from '../runtime/limiter';

export interface Device {
  /** "Firefox", "Chrome", or null when the User-Agent names no browser we know (a script, an app). */
  browser: string | null;
  /** "Windows", "iOS", "Linux"..., or null. */
  system: string | null;
  /** "desktop", "mobile", "tablet", or null. */
  kind: string | null;
  /** How a page or a mail says it: "Firefox on Windows", or the User-Agent itself (60 characters), or "an unknown device". */
  label: string;
}

const clean = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 40) : null);
const known = (name: string | null, names: Record<string, string>): string | null => (name !== null && Object.values(names).includes(name) ? name : null);

export async function describeDevice(userAgent: string | null): Promise<Device> {
  if (!userAgent) return { browser: null, system: null, kind: null, label: 'an unknown device' };
  const { default: Bowser } = await import('bowser');
  const parsed = Bowser.parse(userAgent.slice(0, 200));
  // Only names bowser knows: for a User-Agent it does not, it takes the name from the text
  // ("Anything/1.0" is a browser "Anything"), which whoever signs in writes.
  const browser = known(clean(parsed.browser.name), Bowser.BROWSER_MAP);
  const system = known(clean(parsed.os.name), Bowser.OS_MAP);
  const kind = clean(parsed.platform.type);
  // A User-Agent no browser is read from (a script, an app) is shown as it says itself.
  const label = browser && system ? `${browser} on ${system}` : (browser ?? system ?? (userAgent.trim().slice(0, 60) || 'an unknown device'));
  return { browser, system, kind, label };
}

/**
 * What makes a sign-in "the same browser, the same place" for the new-sign-in mail: the browser's
 * family and system (not its version, which moves every month) and the address's group. Hashed
 * when stored (store/counters.ts known_signin keys).
 */
export async function signinPlace(userAgent: string | null, address: string | null): Promise<string> {
  const d = await describeDevice(userAgent);
  return `${d.browser ?? '?'}|${d.system ?? '?'}|${address ? placeOf(address) : '?'}`;
}

/** An address's neighbourhood: IPv4 by /24 (a home or office network's, its last number moves), IPv6 by /64. */
export function placeOf(address: string): string {
  const group = addressGroup(address);
  const v4 = /^(\d+\.\d+\.\d+)\.\d+$/.exec(group);
  return v4 ? `${v4[1]}.0/24` : group;
}
