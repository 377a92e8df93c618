/**
 * One kind of object a configuration file holds (groups, actions, OIDC clients…): the key it sits
 * under, the JSON Schema of that key's value, how the store is made to match it, and how the
 * store's objects are written back as a file. Each kind lives in kinds/; apply.ts runs them in
 * order, in one transaction.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { unmarkManaged, type ManagedKind } from '../store/config-managed';
import type { ParsedConfig } from './document';

export interface PlanLine {
  /** + created, ~ changed, - deleted (or no longer managed). */
  sign: '+' | '~' | '-';
  kind: string;
  name: string;
  detail: string | null;
}

/** A line of the plan that changes nothing: an object taken over by the file, a secret kept as stored. */
export interface Note {
  kind: string;
  name: string;
  text: string;
}

/**
 * A secret the store holds, which the file's reference may leave as it is: when the reference is
 * the one recorded for it (or, none recorded, the variable `config export` names for it) and it
 * cannot be read here (the variable is not set, the file does not exist), the stored secret is
 * kept and the plan says so, instead of failing: an export plans as nothing to change where its
 * secrets are not at hand.
 */
export interface KeepSecret {
  kind: string;
  name: string;
  /** The secret the store holds now. */
  current: string;
  /** The reference a file applied last (null: none recorded). */
  stored: unknown;
  /** The variable `config export` names for it when none is recorded. */
  placeholder: string;
}

export interface KindContext {
  readonly s: Services;
  readonly tx: Tx;
  readonly parsed: ParsedConfig;
  /** The file's path, as given: recorded with what it manages and named in refusals. */
  readonly file: string;
  /** A secret's value from its reference (`{env: NAME}` or `{file: PATH}`) at `path` in the file; `keep`: the stored one, when it may stand. */
  secret(path: ReadonlyArray<string | number>, keep?: KeepSecret): Promise<string>;
  /** A file named by `{file: PATH}` at `path` in the file (an SP's metadata): read under a secret file's rules, up to `max` bytes. */
  referencedFile(path: ReadonlyArray<string | number>, max: number, what: string): Promise<string>;
  /** The bytes of a file named by a plain path at `path` in the file (the look's logo), under referencedFile's rules. */
  referencedBytes(path: ReadonlyArray<string | number>, max: number, what: string): Promise<Buffer>;
}

export interface KindResult {
  changes: PlanLine[];
  /** Objects of this kind the file does not name, made by hand or managed by another file (`file`): listed, never touched. */
  unmanaged: Unmanaged[];
  /** What changes nothing but is worth saying: objects taken over, secrets kept as stored. */
  notes: Note[];
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
export type Managed = ReadonlyMap<string, { file: string; made: boolean; refs?: Readonly<Record<string, unknown>> | null }>;

/** The plan's note on an object the file names (taking it over changes none of it): null when this file manages it already. */
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
function droppedBy(managed: Managed, named: (key: string) => boolean, file: string) {
  const out = { remove: [] as string[], release: [] as string[], others: [] as Array<{ key: string; file: string }> };
  for (const [key, entry] of managed) {
    if (named(key)) continue;
    if (entry.file !== file) out.others.push({ key, file: entry.file });
    else if (entry.made) out.remove.push(key);
    else out.release.push(key);
  }
  return out;
}

/** How one kind drops what its file no longer names (dropUnnamed). */
export interface Unnamed<T> {
  /** config_managed's kind, and the kind the plan names. */
  kind: ManagedKind;
  /** config_managed's entries of the kind. */
  managed: Managed;
  /**
   * Every object of the kind the store holds, as its config_managed key and its name in the list of
   * what no file manages (default: the keys of `remove.stored`, as they are; none: the kind lists none).
   */
  objects?: Iterable<readonly [key: string, name: string]>;
  /** The config_managed keys the file names. */
  named: { has(key: string): boolean };
  /** An object's name in the plan, from its key (default: the key). */
  shown?: (key: string) => string;
  /** Its name in the list of what another file manages (default: `shown`). */
  shownOther?: (key: string) => string;
  /**
   * What an apply made is deleted: found by its key in `stored` (gone already, deleted by hand:
   * only no longer managed), then `drop` deletes it and queues its audit rows. Null: the kind is
   * never deleted by a file, only let go.
   */
  remove: { stored: ReadonlyMap<string, T>; drop(found: T, key: string): Promise<void> } | null;
  /** The plan's words for an object let go and kept (default: made by hand, kept). */
  kept?: string;
}

/**
 * The objects of a kind the file does not name, in the apply's transaction. What this file managed
 * is dropped: each an apply made is deleted (the kind's `remove`), each only taken over is let go
 * and kept; neither is managed from now on. What no file manages (made by hand) and what another
 * file manages are listed in `result.unmanaged`, untouched. Returns the plan's lines, for the kind
 * to place among its own.
 */
export async function dropUnnamed<T>(tx: Tx, result: KindResult, file: string, u: Unnamed<T>): Promise<PlanLine[]> {
  const gone = droppedBy(u.managed, (key) => u.named.has(key), file);
  const shown = u.shown ?? ((key: string) => key);
  const lines: PlanLine[] = [];
  const kept = u.kept ?? 'no longer managed (made by hand: kept)';
  const remove = u.remove;
  for (const key of remove === null ? [...gone.remove, ...gone.release] : gone.release) {
    await unmarkManaged(tx, u.kind, key);
    lines.push({ sign: '-', kind: u.kind, name: shown(key), detail: kept });
  }
  if (remove !== null) {
    for (const key of gone.remove) {
      const name = shown(key);
      const found = remove.stored.get(key);
      if (found !== undefined) await remove.drop(found, key);
      await unmarkManaged(tx, u.kind, key);
      lines.push({ sign: '-', kind: u.kind, name, detail: null });
    }
  }
  const objects = u.objects ?? (remove === null ? [] : [...remove.stored.keys()].map((key) => [key, key] as const));
  const handMade = [...objects].filter(([key]) => !u.named.has(key) && !u.managed.has(key)).map(([, name]) => ({ kind: u.kind, name }));
  result.unmanaged.push(...handMade.sort((a, b) => a.name.localeCompare(b.name)));
  const other = u.shownOther ?? shown;
  result.unmanaged.push(...gone.others.map((o) => ({ kind: u.kind, name: other(o.key), file: o.file })));
  return lines;
}

export const noResult = (): KindResult => ({ changes: [], unmanaged: [], notes: [], audits: [] });

/** A note that `file` takes the object over, when it does. */
export function noteTakeOver(result: KindResult, managed: Managed, key: string, file: string, kind: string, name: string): void {
  const note = takeOverNote(managed, key, file);
  if (note !== null) result.notes.push({ kind, name, text: note });
}

/** A reference as the file writes it: {env: NAME} or {file: PATH}. */
export const shownRef = (ref: unknown) =>
  `{${Object.entries(ref as Record<string, string>)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}}`;

const sameRef = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The plan's words when the file reads a secret from another reference than the one recorded (null: the same, or none recorded). */
export function refChange(key: string, stored: unknown, ref: unknown): string | null {
  if (stored === null || stored === undefined || sameRef(stored, ref)) return null;
  return `${key} read from ${shownRef(ref)} (was ${shownRef(stored)})`;
}

/** Whether a reference may leave the stored secret as it is when it cannot be read (KeepSecret). */
export function mayKeep(ref: unknown, keep: KeepSecret): boolean {
  if (keep.stored !== null && keep.stored !== undefined) return sameRef(keep.stored, ref);
  return sameRef({ env: keep.placeholder }, ref);
}
export const listed = (names: readonly string[]) => (names.length === 0 ? 'none' : names.join(', '));
