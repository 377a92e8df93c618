/**
 * A configuration file against the store: what `plan` prints, what `apply` changes, and what
 * `export` writes. Plan and apply are one computation: every kind (kinds/) makes the store match
 * its part of the file in the transaction that holds the accounts lock (two instances applying
 * one file at once end as one), and a plan is that transaction rolled back. Only what an earlier
 * apply made or took over (config_managed) is ever deleted; objects made by hand are listed as
 * unmanaged and left alone.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { lockAccounts } from '../store/accounts';
import { parseConfig, type ParsedConfig } from './document';
import { KINDS } from './kinds';
import { mayKeep, type KeepSecret, type KindResult, type Note, type PlanLine, type Unmanaged } from './kind';
import type { ConfigDocument } from './schema';
import { absentSecret, readReferencedBytes, readReferencedFile, resolveSecret, type SecretRef } from './secrets';

export type { Note, PlanLine } from './kind';

export interface Plan {
  changes: PlanLine[];
  /** Objects the file does not name, made by hand or managed by another file: never changed or deleted by it. */
  unmanaged: Unmanaged[];
  /** What changes nothing: objects the file takes over (managed by it from now on), secrets kept as stored. */
  notes: Note[];
}

/** A rollback that carries the plan out of a transaction that must not commit. */
class PlanOnly extends Error {
  constructor(readonly plan: Plan) {
    super('plan only');
  }
}

async function reconcile(s: Services, tx: Tx, parsed: ParsedConfig, file: string, env: NodeJS.ProcessEnv) {
  await lockAccounts(tx);
  const all: KindResult = { changes: [], unmanaged: [], notes: [], audits: [] };
  const kept: Note[] = [];
  const at = (path: ReadonlyArray<string | number>) => {
    let node: unknown = parsed.doc;
    for (const p of path) node = (node as Record<string | number, unknown>)[p];
    return node;
  };
  const secret = async (path: ReadonlyArray<string | number>, keep?: KeepSecret) => {
    const ref = at(path) as SecretRef;
    const absent = keep ? absentSecret(ref, file, env) : null;
    if (keep && absent !== null && mayKeep(ref, keep)) {
      kept.push({ kind: keep.kind, name: keep.name, text: `${String(path[path.length - 1])}: ${absent}: the stored one is kept` });
      return keep.current;
    }
    return resolveSecret(ref, parsed.at(path), file, env);
  };
  const referencedFile = async (path: ReadonlyArray<string | number>, max: number, what: string) =>
    readReferencedFile((at(path) as { file: string }).file, parsed.at(path), file, env, max, what);
  const referencedBytes = async (path: ReadonlyArray<string | number>, max: number, what: string) =>
    readReferencedBytes(at(path) as string, parsed.at(path), file, env, max, what);
  for (const kind of KINDS) {
    const r = await kind.reconcile({ s, tx, parsed, file, secret, referencedFile, referencedBytes });
    all.changes.push(...r.changes);
    all.unmanaged.push(...r.unmanaged);
    // Its secrets kept as stored, after its other notes.
    all.notes.push(...r.notes, ...kept.splice(0));
    all.audits.push(...r.audits);
  }
  return all;
}

/** What applying the file would change: the same computation as apply, rolled back. */
export async function planConfig(s: Services, text: string, file: string, env: NodeJS.ProcessEnv): Promise<Plan> {
  const parsed = await parseConfig(text, file);
  try {
    await s.store.transaction(async (tx) => {
      const r = await reconcile(s, tx, parsed, file, env);
      throw new PlanOnly({ changes: r.changes, unmanaged: r.unmanaged, notes: r.notes });
    });
  } catch (err) {
    if (err instanceof PlanOnly) return err.plan;
    throw err;
  }
  throw new AppError('internal', 'the plan did not roll back');
}

/** Makes the store match the file, in one transaction; audited once it has committed. */
export async function applyConfig(s: Services, actor: Actor, text: string, file: string, env: NodeJS.ProcessEnv): Promise<Plan> {
  const parsed = await parseConfig(text, file);
  const r = await s.store.transaction((tx) => reconcile(s, tx, parsed, file, env));
  for (const audit of r.audits) await audit(s, actor);
  return { changes: r.changes, unmanaged: r.unmanaged, notes: r.notes };
}

/** What an operator configures, as a file (never a secret: references in their place). */
export async function exportConfig(s: Services): Promise<ConfigDocument> {
  const doc: ConfigDocument = { version: 1 };
  for (const kind of KINDS) {
    const value = await kind.export(s);
    if (value !== undefined) doc[kind.key] = value;
  }
  return doc;
}
