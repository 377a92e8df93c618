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
}

export interface KindResult {
  changes: PlanLine[];
  /** Objects of this kind made by hand that the file does not name: listed, never touched. */
  unmanaged: Array<{ kind: string; name: string }>;
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

export const noResult = (): KindResult => ({ changes: [], unmanaged: [], audits: [] });
export const listed = (names: readonly string[]) => (names.length === 0 ? 'none' : names.join(', '));
