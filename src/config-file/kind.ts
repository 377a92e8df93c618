/**
 * One kind of object a configuration file holds (groups, actions, OIDC clients…): the key it sits
 * under, the JSON Schema of that key's value, how the store is made to match it, and how the
 * store's objects are written back as a file. Each kind lives in kinds/; apply.ts runs them in
 * order, in one transaction.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import type { ParsedConfig } from './document';

export interface PlanLine {
  /** + created, ~ changed, - deleted (or no longer managed). */
  sign: '+' | '~' | '-';
  kind: string;
  name: string;
  detail: string | null;
}

export interface KindContext {
  readonly s: Services;
  readonly tx: Tx;
  readonly parsed: ParsedConfig;
  /** The file's path, as given: recorded with what it manages and named in refusals. */
  readonly file: string;
  /** A secret's value from its reference (`{env: NAME}` or `{file: PATH}`) at `path` in the file. */
  secret(path: ReadonlyArray<string | number>): Promise<string>;
  /** A file named by `{file: PATH}` at `path` in the file (an SP's metadata): read under a secret file's rules, up to `max` bytes. */
  referencedFile(path: ReadonlyArray<string | number>, max: number, what: string): Promise<string>;
}

export interface KindResult {
  changes: PlanLine[];
  /** Objects of this kind the file does not name, made by hand or managed by another file (`file`): listed, never touched. */
  unmanaged: Unmanaged[];
  /** Audit rows, written once the transaction has committed. */
  audits: Array<(s: Services, actor: Actor) => Promise<void>>;
}

export interface ConfigKind {
  /** The file's top-level key. */
  readonly key: string;
  /** The JSON Schema of the value under the key. */
  readonly schema: object;
  /** Makes the store match the file's value (absent: nothing of this kind is wanted). */
  reconcile(ctx: KindContext): Promise<KindResult>;
  /** The value the store's objects make (undefined: the key is left out). */
  export(s: Services): Promise<unknown>;
}

export interface Unmanaged {
  kind: string;
  name: string;
  /** The other configuration file that manages it (none: made by hand). */
  file?: string;
}

/** config_managed's entries of one kind: the file that manages each, and whether an apply made it. */
export type Managed = ReadonlyMap<string, { file: string; made: boolean }>;

/** The plan's note on an object the file names: null when this file manages it already. */
export function takeOverNote(managed: Managed, key: string, file: string): string | null {
  const entry = managed.get(key);
  if (entry?.file === file) return null;
  return entry ? `taken over from ${entry.file}: managed by ${file} from now on` : `taken over: managed by ${file} from now on`;
}

/**
 * What this file managed and no longer names: `remove` (an apply made it) and `release` (made by
 * hand and only taken over: let go, kept). What another file manages is that file's: never removed
 * or released here, only listed (`others`).
 */
export function droppedBy(managed: Managed, named: (key: string) => boolean, file: string) {
  const out = { remove: [] as string[], release: [] as string[], others: [] as Array<{ key: string; file: string }> };
  for (const [key, entry] of managed) {
    if (named(key)) continue;
    if (entry.file !== file) out.others.push({ key, file: entry.file });
    else if (entry.made) out.remove.push(key);
    else out.release.push(key);
  }
  return out;
}

export const noResult = (): KindResult => ({ changes: [], unmanaged: [], audits: [] });
export const listed = (names: readonly string[]) => (names.length === 0 ? 'none' : names.join(', '));
