/**
 * Who manages an object besides the people at the console and the shell: a configuration file
 * (`config apply`, `serve --config`) or a directory source (its sync). What they manage is theirs
 * to change: anyone else's change is refused, naming where the change belongs, and the manager's
 * own writer (an apply, `via: 'config'`; a sync, `via: 'source'`) passes. One guard for both,
 * called in the transaction of the write it guards.
 *
 * It sits below every domain rather than in config-file/ or sources/: those two write through the
 * groups', accounts' and services' use cases, which call this guard, and the folders may not form
 * a cycle (test/unit/architecture.test.ts).
 */
import type { Via } from '../actor';
import { AppError } from '../errors';
import type { Tx } from '../store/connection';
import { lockAccounts } from '../store/accounts';
import { managedKey, managingFile, type ManagedKind } from '../store/config-managed';
import { sourceOfAccount, sourceOfGroup } from '../store/sources';

/**
 * What a change touches. A file manages a group's name, existence, settings and the groups inside
 * it, never the people in it (a file holds no people); a directory source manages a group's name,
 * existence, members and inner groups, not its settings (who may see it, its owner).
 */
export type GroupPart = 'name and existence' | 'members' | 'inner groups' | 'settings';
/** A directory source's person: all of these are the directory's (a sync would undo the change, or the password is checked there). */
export type AccountPart = 'name' | 'username' | 'email' | 'password' | 'profile' | 'deletion';

/** An object and the part of it a change touches. Accounts are managed by sources only; services by files only. */
export type ManagedObject =
  | { kind: 'account'; id: number; part: AccountPart }
  | { kind: 'group'; id: number; name: string; part: GroupPart | readonly GroupPart[] }
  | { kind: Exclude<ManagedKind, 'group'>; name: string };

export type Manager = { by: 'file'; file: string } | { by: 'directory'; source: string; gone: boolean };

const FILE_OWNS: ReadonlySet<GroupPart> = new Set(['name and existence', 'inner groups', 'settings']);
const SOURCE_OWNS: ReadonlySet<GroupPart> = new Set(['name and existence', 'members', 'inner groups']);
const partsOf = (o: Extract<ManagedObject, { kind: 'group' }>): readonly GroupPart[] => (typeof o.part === 'string' ? [o.part] : o.part);

/** The managers of the part of the object a change touches: the file first, then the directory source. */
export async function managedBy(tx: Tx, object: ManagedObject): Promise<Manager[]> {
  const out: Manager[] = [];
  if (object.kind === 'account') {
    const source = await sourceOfAccount(tx, object.id);
    if (source) out.push({ by: 'directory', source: source.name, gone: source.gone });
    return out;
  }
  if (object.kind !== 'group' || partsOf(object).some((p) => FILE_OWNS.has(p))) {
    const file = await managingFile(tx, object.kind, managedKey(object.kind, object.name));
    if (file !== null) out.push({ by: 'file', file });
  }
  if (object.kind === 'group' && partsOf(object).some((p) => SOURCE_OWNS.has(p))) {
    const source = await sourceOfGroup(tx, object.id);
    if (source !== null) out.push({ by: 'directory', source, gone: false });
  }
  return out;
}

/** Each manager's own writer: the change it makes is the one that belongs. */
const WRITER: Record<Manager['by'], Via> = { file: 'config', directory: 'source' };

/** The refusal of a change to what a manager owns, naming where it belongs; null when `via` is the manager's own writer. */
function refusal(via: Via, object: ManagedObject, m: Manager): AppError | null {
  if (via === WRITER[m.by]) return null;
  if (m.by === 'file') {
    const name = object.kind === 'account' ? '' : object.name;
    return new AppError('forbidden', `the ${object.kind} ${name} is managed by the configuration file ${m.file}: change it there`, {
      reason: 'managed_by_file',
    });
  }
  if (object.kind === 'account') {
    // A person the directory no longer has (disabled by the sync) may be deleted here.
    if (object.part === 'deletion' && m.gone) return null;
    if (object.part === 'deletion') {
      return new AppError(
        'forbidden',
        `this account comes from the directory source ${m.source}: remove the person there (a sync then disables the account, which may then be deleted)`,
        { reason: 'managed_by_directory' },
      );
    }
    return new AppError('forbidden', `this account comes from the directory source ${m.source}: its ${object.part} is changed there`, {
      reason: 'managed_by_directory',
    });
  }
  const part = object.kind === 'group' ? partsOf(object).find((p) => SOURCE_OWNS.has(p)) : undefined;
  return new AppError('forbidden', `this group comes from the directory source ${m.source}: its ${part ?? 'name and existence'} are changed there`, {
    reason: 'managed_by_directory',
  });
}

/**
 * Refuses a change to the part of an object a configuration file or a directory source manages,
 * unless `via` is that manager's writer; `besides` names a manager whose part the change leaves
 * alone (an import's subgroup beside a file's inner groups).
 */
export async function assertNotManaged(tx: Tx, via: Via, object: ManagedObject, besides?: Manager['by']): Promise<void> {
  for (const m of await managedBy(tx, object)) {
    if (m.by === besides) continue;
    const refused = refusal(via, object, m);
    if (refused) throw refused;
  }
}

/**
 * A change to objects of a kind a configuration file may manage (one, or what sits beside some:
 * `names`, all checked): the guard and the write in one transaction holding the accounts lock, as
 * every apply does, so an apply taking an object over and this change run one after the other,
 * never interleaved (a removal checked before an apply and written after it would take a file's
 * object away).
 */
export function unlessManaged<T>(
  store: { transaction<R>(fn: (tx: Tx) => Promise<R>): Promise<R> },
  via: Via,
  kind: Exclude<ManagedKind, 'group'>,
  names: string | readonly string[],
  write: (tx: Tx) => Promise<T>,
): Promise<T> {
  return store.transaction(async (tx) => {
    await lockAccounts(tx);
    for (const name of typeof names === 'string' ? [names] : names) await assertNotManaged(tx, via, { kind, name });
    return write(tx);
  });
}
