/**
 * The import's writes, inside the caller's transaction (which holds lockAccounts). Every check is
 * a read made before the first write of a group or a person, so a refusal leaves the transaction
 * usable for the next one (PostgreSQL aborts a transaction at its first failed statement).
 *
 * Imported accounts are made as createAccount makes any (the account, its own group, `users`),
 * with the file's hash kept as it is; the import never makes an administrator, and never touches
 * one. An account that is already there is the import's own only when it still holds the very
 * hash the file has (a previous run of the same file); any other is a local account, left alone
 * unless --overwrite.
 */
import { AppError, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Tx } from '../store/connection';
import {
  addMembership,
  emailIsUsername,
  findAccountByEmailKey,
  insertAccount,
  insertGroup,
  isAdministrator,
  systemGroupId,
  updateAccount,
  usernameInUse,
  type AccountChanges,
} from '../store/accounts';
import { findGroupsByName, isMember, type GroupRow } from '../store/groups';
import { addNesting } from '../store/nesting';
import { readWorld } from '../store/guarded-rows';
import { assertNotManaged } from '../managed/managed-by';
import { sourceOfAccount } from '../store/sources';
import { createGroupIn, parseSentGroupName } from '../groups/manage';
import { applyDisabled } from '../accounts/lifecycle';
import { bumpAuthVersion } from '../accounts/session-ends';
import { usernameFor } from '../accounts/usernames';
import { checkedSkeleton } from '../accounts/lookalikes';
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
}

/** What the groups phase resolved: each file key → the group, or absent when it was skipped. */
export type GroupMap = Map<string, GroupRow>;

const message = (err: unknown) => (isAppError(err) ? err.message : 'could not be written');

const managed = (g: GroupRow) => g.user_account_id === null && g.system_role === null;

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
      const existing = (await findGroupsByName(tx, name)).find(managed);
      if (existing) {
        // People join it and groups go inside it: a file's group has the inner groups the file says; a
        // directory source's group, the directory's members (a sync would take them out again).
        await assertNotManaged(tx, actor.via, { kind: 'group', id: existing.id, name: existing.name, part: ['members', 'inner groups'] });
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
      if (await addNesting(tx, parent.id, child.id, { parent: parent.name, child: child.name })) {
        nested.push([parent, child]);
        if (outcome) outcome.nestedIn = parent.name;
      }
    } catch (err) {
      if (outcome) outcome.reason = `not put inside ${parent.name}: ${message(err)}`;
    }
  }
  return { map, outcomes, made, nested };
}

/** The table defaults a new account and its rows get, read once per transaction. */
export interface Defaults {
  account: number;
  group: number;
  membership: number;
  users: number;
}

export async function readDefaults(tx: Tx): Promise<Defaults> {
  const [account, group, membership] = await Promise.all([readWorld(tx, 'user_account'), readWorld(tx, 'usergroup'), readWorld(tx, 'membership')]);
  return {
    account: account.row.default_permission,
    group: group.row.default_permission,
    membership: membership.row.default_permission,
    users: await systemGroupId(tx, 'users'),
  };
}

async function join(tx: Tx, accountId: number, person: PlannedPerson, groups: GroupMap, membership: number): Promise<GroupRow[]> {
  const joined: GroupRow[] = [];
  for (const key of person.groups) {
    const group = groups.get(key);
    if (!group || (await isMember(tx, accountId, group.id))) continue;
    await addMembership(tx, accountId, group.id, membership);
    joined.push(group);
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
export async function writePerson(tx: Tx, person: PlannedPerson, groups: GroupMap, d: Defaults, run: RunOptions): Promise<PersonOutcome> {
  const overwrite = run.overwrite;
  const skipped = (reason: string): PersonOutcome => ({ outcome: 'skipped', reason, joined: [] });
  const found = await findAccountByEmailKey(tx, person.emailKey);
  if (!found) {
    if (await emailIsUsername(tx, person.emailKey)) return skipped('this email is the username of another account');
    let emailSkeleton: string;
    try {
      // The operator reads the report: it names the account the address looks like.
      emailSkeleton = await checkedSkeleton(tx, person.emailKey, { reveal: true, allow: run.allowLookalike, flag: '{--allow-lookalike}' });
    } catch (err) {
      if (isAppError(err) && err.code === 'email_taken') return skipped(err.message);
      throw err;
    }
    let note: string | undefined;
    let asked = person.username;
    if (asked !== undefined && (await usernameInUse(tx, asked))) {
      note = `the username ${asked} is taken: another was made from the email`;
      asked = undefined;
    }
    const username = await usernameFor(tx, person.email, asked);
    const account = await insertAccount(tx, {
      email: person.email,
      emailKey: person.emailKey,
      emailSkeleton,
      username,
      name: person.name,
      passwordHash: person.passwordHash ?? '',
      permission: d.account,
      // As a provisioning service's: never the first administrator, may start disabled.
      provisioned: { externalId: null, disabled: person.disabled },
      origin: run.format,
    });
    if (!person.emailVerified) await updateAccount(tx, account.id, { email_verified: false });
    const home = await insertGroup(tx, { name: `Home group of ${person.name}`.slice(0, 100), ownerId: account.id, permission: d.group });
    await addMembership(tx, account.id, home.id, d.membership);
    await addMembership(tx, account.id, d.users, d.membership);
    const joined = await join(tx, account.id, person, groups, d.membership);
    return { outcome: 'created', account: account.referenceId, joined, ...(note ? { reason: note } : {}) };
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
  const joined = await join(tx, found.id, person, groups, d.membership);
  if (joined.length > 0) what.push('groups');
  if (what.length === 0) return { outcome: 'unchanged', account: found.reference_id, joined };
  return { outcome: 'updated', reason: what.join(', '), account: found.reference_id, joined };
}

export const importFailed = (reason: string) => new AppError('invalid_input', reason);
