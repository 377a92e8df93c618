/**
 * The import's writes, inside the caller's transaction (which holds lockAccounts). Every check is
 * a read made before the first write of a group or a person, so a refusal leaves the transaction
 * usable for the next one (PostgreSQL aborts a transaction at its first failed statement).
 *
 * Imported accounts are made by the one maker (accounts/make.ts: the account, its own group,
 * `users`, the address and name rules), with the file's hash kept as it is and the file's format as
 * their origin; the import never makes an administrator, and never touches one. People join groups
 * and subgroups go inside their parents through the groups domain's own use cases (its rules:
 * managed groups, a source's or a file's groups, nesting limits). An account that is already there
 * is the import's own only when it still holds the very hash the file has (a previous run of the
 * same file); any other is a local account, left alone unless --overwrite.
 */
import { AppError, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Tx } from '../store/connection';
import { findAccountByEmailKey, isAdministrator, NO_PASSWORD, updateAccount, type AccountChanges } from '../store/accounts';
import { bumpAuthVersion } from '../accounts/session-ends';
import type { GroupRow } from '../store/groups';
import { sourceOfAccount } from '../store/sources';
import { createGroupIn, managedGroupNamed, parseSentGroupName } from '../groups/manage';
import { assertMayChangePeople, membershipWriter, readableGroup } from '../groups/members';
import { changeNestingIn } from '../groups/nesting';
import { applyDisabled } from '../accounts/lifecycle';
import { accountMaker } from '../accounts/make';
import type { AuditEntry } from '../audit';
import type { ImportFormat, SourceGroup } from './source';
import { shown, type PlannedPerson } from './plan';

export interface GroupOutcome {
  name: string;
  outcome: 'created' | 'existing' | 'skipped';
  reason?: string;
  /** The group it was put inside by this run. */
  nestedIn?: string;
}

export interface PersonOutcome {
  outcome: 'created' | 'updated' | 'unchanged' | 'skipped';
  reason?: string;
  account?: string;
  /** Groups this run added the person to (reference ids, for the audit). */
  joined: GroupRow[];
  /** The audit rows of the account made (the maker's). */
  made?: AuditEntry[];
}

/** What the groups phase resolved: each file key → the group, or absent when it was skipped. */
export type GroupMap = Map<string, GroupRow>;

const message = (err: unknown) => (isAppError(err) ? err.message : 'could not be written');

/** Makes or finds the file's groups (parents first), then nests the subgroups. */
export async function writeGroups(
  tx: Tx,
  actor: Actor,
  groups: readonly SourceGroup[],
): Promise<{ map: GroupMap; outcomes: GroupOutcome[]; made: GroupRow[]; nested: Array<[GroupRow, GroupRow]> }> {
  const map: GroupMap = new Map();
  const outcomes: GroupOutcome[] = [];
  const made: GroupRow[] = [];
  const nested: Array<[GroupRow, GroupRow]> = [];
  for (const g of groups) {
    try {
      // Another system's names: hidden characters are removed, not refused (accounts/validate.ts).
      const name = parseSentGroupName(g.name);
      const existing = await managedGroupNamed(tx, name);
      if (existing) {
        // People join it as `group add` would have them: its rules (a directory source's group has the directory's members).
        await assertMayChangePeople(tx, actor, await readableGroup(tx, actor.principal, existing.reference_id));
        map.set(g.key, existing);
        outcomes.push({ name: existing.name, outcome: 'existing' });
      } else {
        const group = await createGroupIn(tx, actor, { name, ownerId: null });
        map.set(g.key, group);
        made.push(group);
        outcomes.push({ name, outcome: 'created' });
      }
    } catch (err) {
      // The file's own text, shown without control characters (plan.ts).
      outcomes.push({ name: shown(g.name), outcome: 'skipped', reason: shown(message(err), 200) });
    }
  }
  for (const g of groups) {
    const child = map.get(g.key);
    const parent = g.parent === null ? undefined : map.get(g.parent);
    if (!child || !parent) continue;
    const outcome = outcomes.find((o) => o.name.toLowerCase() === child.name.toLowerCase());
    try {
      // Under a parent a configuration file manages, the subgroup goes in beside the file's own
      // (the file leaves it there: config-file/kinds/groups.ts), so its people are in the parent.
      const r = await changeNestingIn(tx, actor, parent.reference_id, [child.reference_id], 'add', { besideFile: true });
      if (r.changed.length > 0) {
        nested.push([r.group, child]);
        if (outcome) outcome.nestedIn = parent.name;
      }
    } catch (err) {
      if (outcome) outcome.reason = `not put inside ${parent.name}: ${message(err)}`;
    }
  }
  return { map, outcomes, made, nested };
}

/** The writers of one transaction: the account maker and the groups' membership writer (each reads its defaults once). */
export interface Writers {
  make: ReturnType<typeof accountMaker>;
  join: ReturnType<typeof membershipWriter>;
}

export function openWriters(tx: Tx, actor: Actor, run: RunOptions): Writers {
  return { make: accountMaker(tx, actor, run.format), join: membershipWriter(tx, actor) };
}

async function join(w: Writers, account: { id: number; reference_id: string }, person: PlannedPerson, groups: GroupMap): Promise<GroupRow[]> {
  const joined: GroupRow[] = [];
  for (const key of person.groups) {
    const group = groups.get(key);
    if (group && (await w.join(group, [account], 'add')).length > 0) joined.push(group);
  }
  return joined;
}

/** How this run writes: the file's format (the origin of the accounts it makes), --overwrite and --allow-lookalike. */
export interface RunOptions {
  format: ImportFormat;
  overwrite: boolean;
  allowLookalike?: boolean;
}

/**
 * One person: created, brought up to date, or left alone (with the reason). An account made here
 * records the file's format as its origin; one that was already there keeps its own (null when it
 * was made here), --overwrite or not: origin says what made the account, not who last wrote it.
 */
export async function writePerson(w: Writers, tx: Tx, person: PlannedPerson, groups: GroupMap, run: RunOptions): Promise<PersonOutcome> {
  const overwrite = run.overwrite;
  const skipped = (reason: string): PersonOutcome => ({ outcome: 'skipped', reason, joined: [] });
  const found = await findAccountByEmailKey(tx, person.emailKey);
  if (!found) {
    let made;
    try {
      made = await w.make({
        email: person.email,
        name: person.name,
        username: person.username,
        // A username the file asks for and another account has: one is made from the email, and the report says so.
        ifUsernameTaken: 'make-one',
        passwordHash: person.passwordHash ?? NO_PASSWORD,
        emailVerified: person.emailVerified,
        disabled: person.disabled,
        // The operator reads the report: it names the account the address looks like.
        lookalike: { allow: run.allowLookalike, flag: '{--allow-lookalike}' },
      });
    } catch (err) {
      // Refused before anything was written (the address is another's username, or looks like another's address).
      if (isAppError(err) && err.code === 'email_taken') return skipped(err.message);
      throw err;
    }
    const note =
      person.username !== undefined && made.username !== person.username
        ? `the username ${person.username} is taken: another was made from the email`
        : undefined;
    const joined = await join(w, { id: made.id, reference_id: made.referenceId }, person, groups);
    return { outcome: 'created', account: made.referenceId, joined, made: made.audit, ...(note ? { reason: note } : {}) };
  }
  // Operators are never reached by a source of people, --overwrite or not.
  if (await isAdministrator(tx, found.id)) return skipped('an administrator: an import never changes administrators');
  // A directory source's person: name and password are the directory's, --overwrite or not.
  const source = await sourceOfAccount(tx, found.id);
  if (source !== null) return skipped(`from the directory source ${source.name}: an import never changes its people`);
  const ours = person.passwordHash !== null && found.password === person.passwordHash;
  if (!ours && !overwrite) return skipped('an account with this email already exists ({--overwrite} brings the file’s name, password and groups to it)');
  const changes: AccountChanges = {};
  const what: string[] = [];
  if (found.name !== person.name) {
    changes.name = person.name;
    what.push('name');
  }
  if (overwrite && person.passwordHash !== null && found.password !== person.passwordHash) {
    // A new password ends every session the account had.
    await bumpAuthVersion(tx, found.id, { ...changes, password: person.passwordHash });
    what.push('password');
  } else if (Object.keys(changes).length > 0) await updateAccount(tx, found.id, changes);
  if (overwrite && person.disabled && (await applyDisabled(tx, found, true))) what.push('disabled');
  const joined = await join(w, found, person, groups);
  if (joined.length > 0) what.push('groups');
  if (what.length === 0) return { outcome: 'unchanged', account: found.reference_id, joined };
  return { outcome: 'updated', reason: what.join(', '), account: found.reference_id, joined };
}

export const importFailed = (reason: string) => new AppError('invalid_input', reason);
