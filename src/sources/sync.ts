/**
 * A sync: read the directory whole (people, then groups), then write what changed in one
 * transaction under the accounts lock. Reading first means a directory that fails halfway changes
 * nothing here: no one is disabled because a page did not arrive.
 *
 * People and groups are keyed by their id attribute (entryUUID, objectGUID): a rename there is an
 * update here. A person gone from the directory is disabled, never deleted (and enabled again if
 * they come back); a group gone is removed. A synced group's members and the groups inside it are
 * the directory's. A local account or group that already has an entry's email, username or name is
 * never taken over: the entry is skipped, with the reason.
 */
import { AppError, isAppError } from '../errors';
import type { Actor } from '../actor';
import type { AuditEntry } from '../audit';
import type { Tx } from '../store/connection';
import {
  emailIsUsername,
  findAccountByEmailKey,
  findAccountById,
  updateAccount,
  usernameInUse,
  NO_PASSWORD,
  type AccountChanges,
  type AccountRow,
} from '../store/accounts';
import { findGroupById, membersOf, type GroupRow } from '../store/groups';
import { childGroups } from '../store/nesting';
import { accountsOfSource, deleteEntry, insertEntry, sourceEntries, updateEntry, type EntryRow, type SourceRow } from '../store/sources';
import { normalizeEmail, sentName } from '../accounts/validate';
import { checkedSkeleton } from '../accounts/lookalikes';
import { parseUsername } from '../accounts/usernames';
import { applyDisabled } from '../accounts/lifecycle';
import { accountMaker } from '../accounts/make';
import { createGroupIn, deleteGroupIn, parseSentGroupName, renameGroupIn } from '../groups/manage';
import { membershipWriter } from '../groups/members';
import { changeNestingIn } from '../groups/nesting';
import { CONTROL, DirectoryConnection, entryIdOf, type DirectoryEntry } from './directory-client';

export interface SourcePerson {
  entryId: string;
  dn: string;
  username: string;
  email: string;
  emailKey: string;
  name: string;
}

export interface SourceGroup {
  entryId: string;
  dn: string;
  name: string;
  /** Member DNs, normalized (dnKey). */
  members: string[];
}

export interface Snapshot {
  people: SourcePerson[];
  groups: SourceGroup[];
  skipped: Skipped[];
  /** How many people and groups the read left out (each is in `skipped`). */
  skippedPeople: number;
  skippedGroups: number;
  /** The id of every entry the directory answered, those left out too: none of them is gone. */
  seenPeople: Set<string>;
  seenGroups: Set<string>;
}

export interface Skipped {
  dn: string;
  reason: string;
}

export interface SyncReport {
  people: { created: number; updated: number; unchanged: number; disabled: number; enabled: number; skipped: number };
  groups: { created: number; renamed: number; removed: number; skipped: number };
  members: { added: number; removed: number };
  nestings: { added: number; removed: number };
  /** Entries left out, and why (the first 100). */
  skipped: Skipped[];
}

/** What the sync changed, for the audit once it has committed. */
export interface SyncEvents {
  /** The audit rows of the accounts made (the one maker's). */
  made: AuditEntry[];
  changed: Array<{ event: 'email_changed' | 'name_changed' | 'username_changed'; account: string }>;
  disabled: string[];
  enabled: string[];
  groupsCreated: GroupRow[];
  groupsRenamed: GroupRow[];
  groupsRemoved: GroupRow[];
  members: Array<{ group: GroupRow; accounts: string[]; change: 'add' | 'remove' }>;
  nestings: Array<{ group: GroupRow; children: GroupRow[]; change: 'add' | 'remove' }>;
}

const MAX_SKIPPED_SHOWN = 100;
/** source_entry.dn's width. */
const MAX_DN_LENGTH = 1000;

/** A DN as a key: lower case, without the spaces around its separators (as directories echo DNs back). */
export function dnKey(dn: string): string {
  // Spaces around an unescaped `,`, `=` or `+` are not part of the DN (RFC 4514); an escaped one
  // (`R&D\, Europe`) is a character of its value, and the spaces beside it are kept.
  let out = '';
  let spaces = '';
  const s = dn.trim().toLowerCase();
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === ' ') spaces += c;
    else if (c === ',' || c === '=' || c === '+') {
      out += c;
      spaces = '';
      while (s[i + 1] === ' ') i++;
    } else {
      out += spaces + (c === '\\' ? s.slice(i, i + 2) : c);
      spaces = '';
      if (c === '\\') i++;
    }
  }
  return out;
}

const text = (entry: DirectoryEntry, attribute: string): string | undefined => {
  const [v] = entry.values.get(attribute.toLowerCase()) ?? [];
  if (v === undefined) return undefined;
  return Buffer.isBuffer(v) ? v.toString('utf8') : v;
};

const shortDn = (dn: string) => dn.replace(CONTROL, '?').slice(0, 200);
const why = (err: unknown) => (isAppError(err) ? err.message : 'could not be written').slice(0, 200);

/**
 * A refusal's words, when the error is one: a check that said no before its write. Anything else
 * (the store failing, a write refused by the database) fails the whole sync, so that no report says
 * "skipped" for what a rolled-back transaction lost.
 */
const refusal = (err: unknown): string => {
  if (!isAppError(err) || err.code === 'unavailable' || err.code === 'internal') throw err;
  return why(err);
};

/** Reads the directory: people and groups, each checked; what cannot be brought is skipped with the reason. */
export async function readDirectory(source: SourceRow): Promise<Snapshot> {
  const connection = await DirectoryConnection.open(source, 'sync');
  let peopleEntries: DirectoryEntry[];
  let groupEntries: DirectoryEntry[];
  try {
    peopleEntries = await connection.all(source, source.user_filter, [
      source.id_attribute,
      source.uid_attribute,
      'mail',
      'cn',
      'displayName',
      'givenName',
      'sn',
    ]);
    groupEntries = await connection.all(source, source.group_filter, [source.id_attribute, 'cn', 'member', 'uniqueMember']);
  } finally {
    await connection.close();
  }
  const skipped: Skipped[] = [];
  const people: SourcePerson[] = [];
  const seenPeople = new Set<string>();
  let skippedPeople = 0;
  // Two entries with one mail or username are not told apart here: the store's own checks at write
  // time keep the account with the entry that already has it (people already synced go first).
  for (const e of peopleEntries) {
    const skip = (reason: string) => {
      skippedPeople++;
      skipped.push({ dn: shortDn(e.dn), reason });
    };
    const entryId = entryIdOf(source, e);
    if (entryId === null) {
      skip(`no usable ${source.id_attribute}`);
      continue;
    }
    if (e.dn.length > MAX_DN_LENGTH) {
      skip(`a DN longer than ${MAX_DN_LENGTH} characters`);
      continue;
    }
    if (seenPeople.has(entryId)) {
      skip(`the ${source.id_attribute} of another entry`);
      continue;
    }
    seenPeople.add(entryId);
    const uid = text(e, source.uid_attribute);
    const mail = text(e, 'mail');
    if (uid === undefined) {
      skip(`no ${source.uid_attribute}`);
      continue;
    }
    if (mail === undefined) {
      skip('no mail');
      continue;
    }
    try {
      const username = parseUsername(uid);
      const { email, key } = normalizeEmail(mail);
      const given = [text(e, 'givenName'), text(e, 'sn')].filter((v) => v !== undefined).join(' ');
      // The directory's name, its hidden characters (bidi overrides, zero-width spaces) removed: accounts/validate.ts.
      const name = sentName(text(e, 'displayName'), text(e, 'cn'), given, username);
      people.push({ entryId, dn: e.dn, username, email, emailKey: key, name });
    } catch (err) {
      skip(why(err).replace('{--username}', source.uid_attribute));
    }
  }
  const groups: SourceGroup[] = [];
  const groupIds = new Set<string>();
  let skippedGroups = 0;
  for (const e of groupEntries) {
    const skip = (reason: string) => {
      skippedGroups++;
      skipped.push({ dn: shortDn(e.dn), reason });
    };
    const entryId = entryIdOf(source, e);
    if (e.dn.length > MAX_DN_LENGTH) {
      skip(`a DN longer than ${MAX_DN_LENGTH} characters`);
      continue;
    }
    if (entryId === null || groupIds.has(entryId)) {
      skip(entryId === null ? `no usable ${source.id_attribute}` : `the ${source.id_attribute} of another entry`);
      continue;
    }
    groupIds.add(entryId);
    try {
      const name = parseSentGroupName(text(e, 'cn') ?? '');
      const raw = [...(e.values.get('member') ?? []), ...(e.values.get('uniquemember') ?? [])];
      // uniqueMember may carry an optional UID after '#' (RFC 4519): the DN is before it.
      const members = raw.map((v) => dnKey((Buffer.isBuffer(v) ? v.toString('utf8') : v).replace(/#'[01]*'B$/, '')));
      groups.push({ entryId, dn: e.dn, name, members });
    } catch (err) {
      skip(why(err));
    }
  }
  return { people, groups, skipped, skippedPeople, skippedGroups, seenPeople, seenGroups: groupIds };
}

/** One sync's writing: what it read of the store first, the writers it uses, and what it reports. */
interface Run {
  tx: Tx;
  actor: Actor;
  /** The actor of the group use cases: they refuse to change a source's group to everyone but its sync. */
  writer: Actor;
  source: SourceRow;
  snap: Snapshot;
  report: SyncReport;
  events: SyncEvents;
  entries: EntryRow[];
  byId: Map<string, EntryRow>;
  accounts: Map<number, AccountRow>;
  make: ReturnType<typeof accountMaker>;
  members: ReturnType<typeof membershipWriter>;
  /** The accounts and groups of the snapshot's DNs (dnKey), as the steps below find or make them. */
  accountOfDn: Map<string, AccountRow>;
  groupOfDn: Map<string, GroupRow>;
  /** When the sync began: a person gone from the directory is marked gone at it. */
  now: number;
  /** The entries still in the directory, even those whose update was refused: never gone. */
  present: Set<number>;
  groupsPresent: Set<number>;
}

/**
 * Writes a snapshot, inside the caller's transaction (which holds lockAccounts). Every check is a
 * read before the write it guards, so a refused entry leaves the transaction usable. The steps, in
 * order: people, groups, each group's people, each group's inner groups, what the directory no
 * longer has.
 */
export async function writeSnapshot(tx: Tx, actor: Actor, source: SourceRow, snap: Snapshot): Promise<{ report: SyncReport; events: SyncEvents }> {
  const run = await startRun(tx, actor, source, snap);
  await writePeople(run);
  await writeGroups(run);
  for (const g of snap.groups) await writeMembers(run, g);
  for (const g of snap.groups) await writeNesting(run, g);
  await writeDepartures(run);
  run.report.skipped = run.report.skipped.slice(0, MAX_SKIPPED_SHOWN);
  return { report: run.report, events: run.events };
}

async function startRun(tx: Tx, actor: Actor, source: SourceRow, snap: Snapshot): Promise<Run> {
  const writer: Actor = { ...actor, via: 'source' };
  const entries = await sourceEntries(tx, source.id);
  return {
    tx,
    actor,
    writer,
    source,
    snap,
    report: {
      people: { created: 0, updated: 0, unchanged: 0, disabled: 0, enabled: 0, skipped: snap.skippedPeople },
      groups: { created: 0, renamed: 0, removed: 0, skipped: snap.skippedGroups },
      members: { added: 0, removed: 0 },
      nestings: { added: 0, removed: 0 },
      skipped: [...snap.skipped],
    },
    events: { made: [], changed: [], disabled: [], enabled: [], groupsCreated: [], groupsRenamed: [], groupsRemoved: [], members: [], nestings: [] },
    entries,
    byId: new Map(entries.map((e) => [`${e.kind}:${e.entry_id}`, e])),
    accounts: await accountsOfSource(tx, source.id),
    make: accountMaker(tx, actor, 'ldap'),
    members: membershipWriter(tx, writer),
    accountOfDn: new Map(),
    groupOfDn: new Map(),
    now: Date.now(),
    present: new Set(),
    groupsPresent: new Set(),
  };
}

const skip = (run: Run, dn: string, reason: string) => run.report.skipped.push({ dn: shortDn(dn), reason });

/** People: made, brought up to date, or back from being gone. */
async function writePeople(run: Run): Promise<void> {
  // People already synced first: of two entries that now share a mail or a username, the one whose
  // account it is keeps it, and the newcomer is the one left out.
  const known = (p: SourcePerson) => (run.byId.has(`person:${p.entryId}`) ? 0 : 1);
  for (const p of [...run.snap.people].sort((a, b) => known(a) - known(b))) {
    const entry = run.byId.get(`person:${p.entryId}`);
    if (entry) {
      // Still in the directory: never disabled as gone, even when its update below is refused.
      run.present.add(entry.id);
      const account = run.accounts.get(entry.id);
      if (account) run.accountOfDn.set(dnKey(p.dn), account);
    }
    try {
      const account = entry ? await updatePerson(run, p, entry) : await createPerson(run, p);
      if (account !== null) run.accountOfDn.set(dnKey(p.dn), account);
    } catch (err) {
      run.report.people.skipped++;
      skip(run, p.dn, refusal(err));
    }
  }
}

/** A new entry: its account made by the one maker (accounts/make.ts), the entry recorded. */
async function createPerson(run: Run, p: SourcePerson): Promise<AccountRow> {
  const made = await run.make({
    email: p.email,
    name: p.name,
    username: p.username,
    // The password is the directory's (a bind per sign-in), unless --keep-passwords keeps a hash after one.
    passwordHash: NO_PASSWORD,
    source: run.source.name,
    words: {
      emailTaken: 'an account with this mail exists already (made here, or for another directory entry): it is left alone',
      emailIsUsername: 'this mail is the username of another account',
      usernameTaken: (username) => `the username ${username} is taken by an account made here`,
    },
  });
  await insertEntry(run.tx, { source_id: run.source.id, kind: 'person', entry_id: p.entryId, dn: p.dn, account_id: made.id, usergroup_id: null });
  run.events.made.push(...made.audit);
  run.report.people.created++;
  return (await findAccountById(run.tx, made.id))!;
}

/** A known entry: its account brought up to it, its DN kept, and enabled again if it had gone. */
async function updatePerson(run: Run, p: SourcePerson, entry: EntryRow): Promise<AccountRow | null> {
  const account = await updateAccountOf(run.tx, p, entry, run.accounts.get(entry.id), run.events);
  if (account === null) {
    run.report.people.unchanged++;
    return null;
  }
  if (entry.dn !== p.dn) await updateEntry(run.tx, entry.id, { dn: p.dn });
  if (entry.gone_at !== null) {
    await updateEntry(run.tx, entry.id, { gone_at: null });
    if (await applyDisabled(run.tx, account.row, false)) {
      run.report.people.enabled++;
      run.events.enabled.push(account.row.reference_id);
    }
  }
  if (account.changed) run.report.people.updated++;
  else run.report.people.unchanged++;
  return account.row;
}

/** Groups: made or renamed (their people and inner groups are the next steps). */
async function writeGroups(run: Run): Promise<void> {
  for (const g of run.snap.groups) {
    const entry = run.byId.get(`group:${g.entryId}`);
    const found = entry && entry.usergroup_id !== null ? await findGroupById(run.tx, entry.usergroup_id) : undefined;
    if (entry) {
      // Still in the directory: never removed as gone, even when its rename below is refused.
      run.groupsPresent.add(entry.id);
      if (found) run.groupOfDn.set(dnKey(g.dn), found);
    }
    try {
      const group = entry ? await renameGroup(run, g, entry, found) : await createGroup(run, g);
      if (group) run.groupOfDn.set(dnKey(g.dn), group);
    } catch (err) {
      run.report.groups.skipped++;
      skip(run, g.dn, refusal(err));
    }
  }
}

async function renameGroup(run: Run, g: SourceGroup, entry: EntryRow, found: GroupRow | undefined): Promise<GroupRow | undefined> {
  let group = found;
  if (found && found.name !== g.name) {
    group = (await renameGroupIn(run.tx, run.writer, found.reference_id, g.name)).group;
    run.report.groups.renamed++;
    run.events.groupsRenamed.push(group);
  }
  if (entry.dn !== g.dn) await updateEntry(run.tx, entry.id, { dn: g.dn });
  return group;
}

async function createGroup(run: Run, g: SourceGroup): Promise<GroupRow> {
  const group = await createGroupIn(run.tx, run.actor, { name: g.name, ownerId: null });
  await insertEntry(run.tx, { source_id: run.source.id, kind: 'group', entry_id: g.entryId, dn: g.dn, account_id: null, usergroup_id: group.id });
  run.report.groups.created++;
  run.events.groupsCreated.push(group);
  return group;
}

/** A synced group's people are the directory's: those it lists join, the others leave (the groups domain's rules). */
async function writeMembers(run: Run, g: SourceGroup): Promise<void> {
  const group = run.groupOfDn.get(dnKey(g.dn));
  if (!group) return;
  const wanted = new Map<number, AccountRow>();
  for (const m of g.members) {
    const account = run.accountOfDn.get(m);
    if (account) wanted.set(account.id, account);
  }
  const current = await membersOf(run.tx, group.id);
  const added = await run.members(
    group,
    [...wanted.values()].filter((a) => !current.some((c) => c.id === a.id)),
    'add',
  );
  const removed = await run.members(
    group,
    current.filter((c) => !wanted.has(c.id)),
    'remove',
  );
  run.report.members.added += added.length;
  run.report.members.removed += removed.length;
  if (added.length > 0) run.events.members.push({ group, accounts: added, change: 'add' });
  if (removed.length > 0) run.events.members.push({ group, accounts: removed, change: 'remove' });
}

/** The groups inside a synced group are the directory's nesting, put in and taken out by the groups domain (its cycle and depth rules). */
async function writeNesting(run: Run, g: SourceGroup): Promise<void> {
  const group = run.groupOfDn.get(dnKey(g.dn));
  if (!group) return;
  const wanted = new Map<number, GroupRow>();
  for (const m of g.members) {
    const inner = run.groupOfDn.get(m);
    if (inner) wanted.set(inner.id, inner);
  }
  const children = await childGroups(run.tx, group.id);
  const nestedIn: GroupRow[] = [];
  for (const [id, inner] of wanted) {
    if (children.some((c) => c.id === id)) continue;
    try {
      const r = await changeNestingIn(run.tx, run.writer, group.reference_id, [inner.reference_id], 'add');
      nestedIn.push(...r.changed);
    } catch (err) {
      skip(run, g.dn, `${inner.name} not put inside it: ${refusal(err)}`);
    }
  }
  const out = children.filter((c) => !wanted.has(c.id));
  let removed: GroupRow[] = [];
  if (out.length > 0) {
    try {
      removed = (
        await changeNestingIn(
          run.tx,
          run.writer,
          group.reference_id,
          out.map((c) => c.reference_id),
          'remove',
        )
      ).changed;
    } catch (err) {
      skip(run, g.dn, `the groups inside it were not taken out: ${refusal(err)}`);
    }
  }
  run.report.nestings.added += nestedIn.length;
  run.report.nestings.removed += removed.length;
  if (nestedIn.length > 0) run.events.nestings.push({ group, children: nestedIn, change: 'add' });
  if (removed.length > 0) run.events.nestings.push({ group, children: removed, change: 'remove' });
}

/** What the directory no longer has: groups removed, people disabled (never deleted). */
async function writeDepartures(run: Run): Promise<void> {
  for (const e of run.entries) {
    if (e.kind === 'group' && !run.groupsPresent.has(e.id) && !run.snap.seenGroups.has(e.entry_id)) await removeGoneGroup(run, e);
    // An entry the directory still has is never gone, even when it was left out above.
    if (e.kind === 'person' && !run.present.has(e.id) && !run.snap.seenPeople.has(e.entry_id) && e.gone_at === null && e.account_id !== null)
      await disableGonePerson(run, e, e.account_id);
  }
}

async function removeGoneGroup(run: Run, e: EntryRow): Promise<void> {
  const group = e.usergroup_id === null ? undefined : await findGroupById(run.tx, e.usergroup_id);
  try {
    if (group) {
      await deleteGroupIn(run.tx, group.reference_id, run.writer.via);
      run.events.groupsRemoved.push(group);
      run.report.groups.removed++;
    }
    await deleteEntry(run.tx, e.id);
  } catch (err) {
    skip(run, e.dn, `a group gone from the directory was kept: ${refusal(err)}`);
  }
}

async function disableGonePerson(run: Run, e: EntryRow, accountId: number): Promise<void> {
  const account = await findAccountById(run.tx, accountId);
  try {
    await updateEntry(run.tx, e.id, { gone_at: run.now });
    if (account && (await applyDisabled(run.tx, account, true))) {
      run.report.people.disabled++;
      run.events.disabled.push(account.reference_id);
    }
  } catch (err) {
    skip(run, e.dn, `a person gone from the directory was not disabled: ${refusal(err)}`);
  }
}

/** Brings an account up to its entry; null when nothing differs. */
async function updateAccountOf(
  tx: Tx,
  p: SourcePerson,
  entry: EntryRow,
  account: AccountRow | undefined,
  events: SyncEvents,
): Promise<{ row: AccountRow; changed: boolean } | null> {
  if (!account) throw new AppError('not_found', 'its account was deleted here');
  const changes: AccountChanges = {};
  if (account.email_key !== p.emailKey) {
    const other = await findAccountByEmailKey(tx, p.emailKey);
    if ((other && other.id !== account.id) || (await emailIsUsername(tx, p.emailKey, account.id))) {
      throw new AppError('email_taken', 'its new mail belongs to another account: left as it was');
    }
    const emailSkeleton = await checkedSkeleton(tx, p.emailKey, { self: account.id, reveal: true });
    Object.assign(changes, { email: p.email, email_key: p.emailKey, email_skeleton: emailSkeleton, email_verified: true });
    events.changed.push({ event: 'email_changed', account: account.reference_id });
  } else if (account.email !== p.email) changes.email = p.email;
  if (account.username !== p.username) {
    if (await usernameInUse(tx, p.username, account.id)) throw new AppError('name_taken', `its new username ${p.username} is taken: left as it was`);
    changes.username = p.username;
    events.changed.push({ event: 'username_changed', account: account.reference_id });
  }
  if (account.name !== p.name) {
    changes.name = p.name;
    events.changed.push({ event: 'name_changed', account: account.reference_id });
  }
  const changed = Object.keys(changes).length > 0;
  if (changed) await updateAccount(tx, account.id, changes);
  if (!changed && entry.gone_at === null && entry.dn === p.dn) return null;
  return { row: changed ? (await findAccountById(tx, account.id))! : account, changed };
}
