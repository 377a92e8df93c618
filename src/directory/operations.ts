/**
 * The directory (contract section 15), as the LDAP front end asks for it: who binds (through the
 * sign-in home's directoryBind), who may search (administrators and members of the reader groups
 * the server names), and the people and groups a search sees. Disabled accounts and unmanaged
 * groups never appear; someone who may not search sees only their own entry. Read on every call:
 * a group change or a disabled account shows on the next request, on every instance, on a
 * connection already bound too (stillBound).
 */
import type { Caller } from '../actor';
import { AppError } from '../errors';
import { movePosixBase, NEVER_GIVEN } from '../store/posix';
import type { Services } from '../services';
import { actorOf } from '../access/caller';
import { directoryBind } from '../accounts/directory-bind';
import { bindHolds, isReader } from '../store/groups';
import { isHostLogin, posixAccount, type PosixAccount } from '../accounts/posix';
import { type GroupEntryRow, type GroupQuery, type PersonRow, readGroups, readPeople } from '../store/directory';

/** A person as the directory serves them: the row, and their POSIX side (null: not a POSIX account, see accounts/posix.ts). */
export type Person = PersonRow & { posix: PosixAccount | null };
/** A group as the directory serves it: `uids` holds only people who are POSIX accounts. */
export type DirectoryGroup = GroupEntryRow;
export type { GroupQuery };

/** Who is bound: an account, and whether it may search the whole directory. */
export interface DirectoryIdentity {
  referenceId: string;
  username: string;
  reader: boolean;
  /** What the bind proved, checked again on every request (stillBound). */
  bound: { accountId: number; authVersion: number; appPasswordId: number | null };
}

/** What a search may narrow to before reading: one person (by username, email or id) or one group (by name). */
export interface PeopleQuery {
  username?: string;
  email?: string;
  referenceId?: string;
  /** Members of this managed group (by name). */
  group?: string;
  /** The person of this POSIX number (uidNumber, or their own group's gidNumber). */
  posixId?: number;
}

export interface DirectoryOperations {
  /** A simple bind: the identity, or invalid_credentials for every failure alike. `readers` are managed group names. */
  bind(caller: Caller, username: string, password: string, readers: readonly string[]): Promise<DirectoryIdentity>;
  /**
   * Whether a bind still holds, read before each request on the connection: the identity as it
   * is now (a reader group left or joined shows), or null when the account was disabled,
   * signed out everywhere, given a new password, removed, or the app password revoked.
   */
  stillBound(identity: DirectoryIdentity, readers: readonly string[]): Promise<DirectoryIdentity | null>;
  /** People the identity may see: everyone enabled for a reader, else only itself. */
  people(identity: DirectoryIdentity, query?: PeopleQuery): Promise<Person[]>;
  /** Managed groups for a reader (optionally narrowed: by name, by a member); none for anyone else. */
  groups(identity: DirectoryIdentity, query?: GroupQuery): Promise<DirectoryGroup[]>;
  /**
   * Sets the base POSIX numbers are given from (--posix-id-base): kept when it is the store's,
   * taken when no number was given yet or it stands past every number given, refused otherwise
   * (it would give a number twice). Returns the base and the next number.
   */
  posixIdBase(base: number): Promise<{ base: number; next: number }>;
  /** Counts one answered search for /metrics, by outcome (ok, refused, not_found, failed). */
  searched(outcome: SearchOutcome): void;
}

export type SearchOutcome = 'ok' | 'refused' | 'not_found' | 'failed';

export function directoryOperations(s: Services): DirectoryOperations {
  return {
    async bind(caller, username, password, readers) {
      // A bind carries no token: the caller is a guest until the bind proves who it is.
      const actor = { ...(await actorOf(s, { ...caller, token: null })), via: 'ldap' as const };
      const { account, appPasswordId } = await directoryBind(s, actor, username, password);
      const reader = await isReader(s.store.root, account.id, readers);
      const bound = { accountId: account.id, authVersion: account.auth_version, appPasswordId };
      return { referenceId: account.reference_id, username: account.username, reader, bound };
    },
    async stillBound(identity, readers) {
      const now = await bindHolds(s.store.root, identity.bound, readers);
      if (!now.holds) return null;
      return now.reader === identity.reader ? identity : { ...identity, reader: now.reader };
    },
    async people(identity, query = {}) {
      // Someone who may not search reads their own entry, whatever they ask for.
      if (!identity.reader) {
        const own = await readPeople(s.store.root, { referenceId: identity.referenceId });
        return own.filter((p) => matches(p, query)).map(withPosix);
      }
      return (
        await pages<PersonRow, string>(
          (after) => readPeople(s.store.root, query, { after, limit: PAGE }),
          (p) => p.username,
        )
      ).map(withPosix);
    },
    async groups(identity, query = {}) {
      if (!identity.reader) return [];
      const groups = await pages<DirectoryGroup, { name: string; id: number }>(
        (after) => readGroups(s.store.root, query, { after, limit: PAGE }),
        (g) => ({ name: g.name, id: g.id }),
      );
      // memberUid names logins: someone whose username is no Linux name, or a host's own account's, is not one.
      for (const g of groups) if (g.uids.some((u) => !isHostLogin(u))) g.uids = g.uids.filter(isHostLogin);
      return groups;
    },
    async posixIdBase(base) {
      if (!Number.isInteger(base) || base < 1000)
        throw new AppError('invalid_input', `{--posix-id-base} must be 1000 or more (below are the system's own accounts), got ${base}`);
      if (NEVER_GIVEN.includes(base))
        throw new AppError(
          'invalid_input',
          `{--posix-id-base} may not be ${base}: 65534 is nobody's (and nogroup's) number on Linux hosts and 65535 means "no user" to some of them, so neither is given (the counter steps over both); give 65533 or less, or 65536 or more`,
        );
      const { counter, refused } = await movePosixBase(s.store.root, base);
      if (refused)
        throw new AppError(
          'invalid_input',
          `{--posix-id-base} ${base} would meet the POSIX numbers already given (${counter.low} to ${counter.next - 1}, from the base ${counter.base}): keep ${counter.base}, or give ${counter.next} or more`,
        );
      return { base: counter.base, next: counter.next };
    },
    searched(outcome) {
      const searches = s.counters.ldap.searches;
      searches[outcome] = (searches[outcome] ?? 0) + 1;
    },
  };
}

/**
 * Rows a page at a time, with other work let in between: reads run on the event loop, and a whole
 * directory read in one step would hold every request behind it (about 10 ms a thousand people).
 * Pages are read in key order after the last row seen, so a change between two pages neither
 * repeats nor skips anyone who did not change.
 */
const PAGE = 500;
async function pages<T, K>(read: (after: K | undefined) => Promise<T[]>, key: (row: T) => K): Promise<T[]> {
  const all: T[] = [];
  let after: K | undefined;
  for (;;) {
    const page = await read(after);
    all.push(...page);
    if (page.length < PAGE) return all;
    after = key(page[page.length - 1]!);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const withPosix = (p: PersonRow): Person => ({ ...p, posix: posixAccount(p.username, p.posix_id, p.login_shell) });

const matches = (p: PersonRow, q: PeopleQuery) =>
  (q.posixId === undefined || p.posix_id === q.posixId) &&
  (q.username === undefined || p.username === q.username) &&
  (q.email === undefined || p.email.toLowerCase() === q.email) &&
  (q.referenceId === undefined || p.reference_id === q.referenceId) &&
  (q.group === undefined || p.groups.some((g) => g.toLowerCase() === q.group!.toLowerCase()));
