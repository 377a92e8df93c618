/**
 * Conditional writes: "write this only if the resource is still version V" (HTTP's If-Match).
 * The version is decided inside the write's transaction, from rows read in it under the lock
 * the use case takes, never by a read before the transaction: two writers sending the same
 * version cannot both pass, and a writer that sent none still works on the resource as it is
 * when it writes (so a concurrent change is never lost).
 */
import { AppError } from '../errors';
import type { Store, Tx } from './connection';

export interface ConditionalWrite<R, T> {
  /** Taken first in the transaction: the lock every writer of this resource takes. */
  lock(tx: Tx): Promise<void>;
  /** The resource as it is now, read in the transaction (after the lock). */
  read(tx: Tx): Promise<R>;
  /** Its version, computed from what `read` answered. */
  version(current: R): string;
  /** The versions the writer accepts (an If-Match header: `*` alone, or entity tags separated by commas); undefined: any. */
  ifMatch: string | undefined;
  /** The write, in the same transaction, on the resource as read. */
  write(tx: Tx, current: R): Promise<T>;
}

const ENTITY_TAG = /^(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/;

/**
 * Whether a version passes an If-Match header (RFC 9110 section 13.1.1): absent (undefined) passes;
 * `*` alone passes; otherwise a list of entity tags, weak or strong spelling, one of which is the
 * version. Anything else (empty, `W/*`, `*` inside a list, an unquoted tag) is refused as
 * invalid, never read as "any".
 */
export function versionMatches(ifMatch: string | undefined, version: string): boolean {
  if (ifMatch === undefined) return true;
  if (ifMatch.trim() === '*') return true;
  const wanted = ifMatch.split(',').map((v) => v.trim());
  if (wanted.length === 0 || wanted.some((v) => !ENTITY_TAG.test(v))) {
    throw new AppError('invalid_input', 'If-Match is * or a list of entity tags such as W/"…"', { scimType: 'invalidValue' });
  }
  const bare = (v: string) => v.replace(/^W\//, '');
  return wanted.map(bare).includes(bare(version));
}

/** Refuses (412 precondition_failed) a version the If-Match list does not name. */
export function assertVersion(ifMatch: string | undefined, version: string): void {
  if (!versionMatches(ifMatch, version)) throw new AppError('precondition_failed', `the resource has changed: its version is now ${version}`);
}

/** Runs a write in one transaction, only if the resource read in it under the lock is still the version asked for. */
export async function writeIfVersion<R, T>(store: Store, w: ConditionalWrite<R, T>): Promise<T> {
  return store.transaction(async (tx) => {
    await w.lock(tx);
    const current = await w.read(tx);
    assertVersion(w.ifMatch, w.version(current));
    return w.write(tx, current);
  });
}
