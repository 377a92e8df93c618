/**
 * What the kinds of a configuration file share: a core refusal at the file's line, a target URL's
 * literal address checked without DNS, the environment variable names an export writes.
 */
import net from 'node:net';
import { isAppError, reworded } from '../../errors';
import { refusedKind } from '../../config/address-ranges';
import { insideNetwork, targetPolicy } from '../../runtime/targets';
import type { ParsedConfig } from '../document';

/** Names that are loopback by definition (RFC 6761: `localhost` and every name under it), as runtime/targets.ts reads them. */
const LOOPBACK_NAME = /^(?:(?:[^.]+\.)*localhost|localhost\.localdomain)\.?$/i;

/**
 * A target URL's host against --webhook-allow-private, without DNS: a literal address
 * (the URL parser has already read 2130706433 and 0x7f.1 as 127.0.0.1) or a loopback name. A name
 * is not resolved here: an apply runs in a transaction that holds the accounts lock, and a slow
 * resolver would hold it too. Nothing is lost: the sender checks every address a name resolves to
 * when it connects (guardedLookup), so a name inside the network is refused at delivery.
 */
export function checkLiteralTarget(url: URL, allowPrivate: readonly string[], where: string): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const address = net.isIP(host) ? host : LOOPBACK_NAME.test(host) ? '127.0.0.1' : null;
  if (address === null) return;
  const kind = refusedKind(address, targetPolicy(allowPrivate));
  // Said of the host as written (`localhost is a loopback address`): no name was resolved.
  if (kind !== null) throw insideNetwork(`${where}: ${host}`, address, address, kind);
}

/** A core refusal at the entry's key (its message's {--flag} worded as that key). */
export function atKey(parsed: ParsedConfig, path: ReadonlyArray<string | number>, key: string, err: unknown): never {
  if (!isAppError(err)) throw err;
  // A refusal that already says where (a file the entry names could not be read) is said once.
  const where = `${parsed.at(path)}: `;
  const text = err.template.replace(/\{--[a-z][a-z-]*\}/g, key);
  throw reworded(err, text.startsWith(where) ? text : where + text);
}

/**
 * The environment variable names an export writes, one per entry: `prefix` and the entry's words
 * in capitals (other characters as _, at most 80), then _2, _3… when two entries give one name
 * (in the order given, so the same store exports the same names).
 */
export function envNames(prefix: string, words: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return words.map((w) => {
    const slug =
      w
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')
        .replace(/^_+|_+$/g, '')
        .slice(0, 80)
        .replace(/_+$/, '') || 'X';
    const base = `${prefix}${slug}`;
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return n === 1 ? base : `${base}_${n}`;
  });
}

/** The schema of an entry's `allowed_groups`: managed groups' names, said of the kind by `description`. */
export const allowedGroupsSchema = (description: string) =>
  ({ type: 'array', maxItems: 100, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 }, description }) as const;

/** Whether two lists hold the same items, in any order. */
export const sameSet = (a: readonly string[], b: readonly string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

/**
 * A core refusal at an entry's line: the shell's {--flag} worded as the file's key (`fileKeys`, or
 * the flag with _ for -), at that key's line when the entry has it, else at the entry's.
 */
export function atEntry(parsed: ParsedConfig, at: readonly [string, number], entry: object, fileKeys: Readonly<Record<string, string>>, err: unknown): never {
  if (!isAppError(err)) throw err;
  let key: string | undefined;
  const message = err.template.replace(/\{--([a-z][a-z-]*)\}/g, (_m, flag: string) => {
    const k = fileKeys[flag] ?? flag.replace(/-/g, '_');
    key ??= k;
    return k;
  });
  const path = key !== undefined && key in entry ? [...at, key] : [...at];
  throw reworded(err, `${parsed.at(path)}: ${message}`);
}
