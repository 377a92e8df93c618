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
import type { Tx } from '../store/connection';
import {
  addMembership,
  emailIsUsername,
  findAccountByEmailKey,
  findAccountById,
  removeMembership,
  updateAccount,
  usernameInUse,
  NO_PASSWORD,
  type AccountChanges,
  type AccountRow,
} from '../store/accounts';
import { findGroupById, findGroupByReference, membersOf, type GroupRow } from '../store/groups';
import { addNesting, childGroups, removeNestings } from '../store/nesting';
import { readWorld } from '../store/guarded-rows';
import { accountsOfSource, deleteEntry, insertEntry, sourceEntries, updateEntry, type EntryRow, type SourceRow } from '../store/sources';
import { normalizeEmail, sentName } from '../accounts/validate';
import { checkedSkeleton } from '../accounts/lookalikes';
import { accountMaker } from '../accounts/make';
import type { AuditEntry } from '../audit';
import { parseUsername } from '../accounts/usernames';
import { applyDisabled } from '../accounts/lifecycle';
import { createGroupIn, deleteGroupIn, parseSentGroupName, renameGroupIn } from '../groups/manage';
import { CONTROL, DirectoryConnection, entryIdOf, type DirectoryEntry } from '../auth/directory-client';

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

/**
 * Writes a snapshot, inside the caller's transaction (which holds lockAccounts). Every check is a
 * read before the write it guards, so a refused entry leaves the transaction usable.
 */
export async function writeSnapshot(tx: Tx, actor: Actor, source: SourceRow, snap: Snapshot): Promise<{ report: SyncReport; events: SyncEvents }> {
  const report: SyncReport = {
    people: { created: 0, updated: 0, unchanged: 0, disabled: 0, enabled: 0, skipped: snap.skippedPeople },
    groups: { created: 0, renamed: 0, removed: 0, skipped: snap.skippedGroups },
    members: { added: 0, removed: 0 },
    nestings: { added: 0, removed: 0 },
    skipped: [...snap.skipped],
  };
  const events: SyncEvents = {
    made: [],
    changed: [],
    disabled: [],
    enabled: [],
    groupsCreated: [],
    groupsRenamed: [],
    groupsRemoved: [],
    members: [],
    nestings: [],
  };
  const skip = (dn: string, reason: string) => report.skipped.push({ dn: shortDn(dn), reason });
  // The group use cases refuse to rename or delete a source's group to everyone but its sync.
  const writer: Actor = { ...actor, via: 'source' };
  const entries = await sourceEntries(tx, source.id);
  const byId = new Map(entries.map((e) => [`${e.kind}:${e.entry_id}`, e]));
  const accounts = await accountsOfSource(tx, source.id);
  const now = Date.now();
  // The one account maker (accounts/make.ts), its tables' defaults read once for the sync.
  const make = accountMaker(tx, actor, 'ldap');
  // One statement at a time on a transaction's connection.
  const membership = (await readWorld(tx, 'membership')).row.default_permission;

  // People: made, brought up to date, or back from being gone.
  const accountOfDn = new Map<string, AccountRow>();
  const present = new Set<number>();
  // People already synced first: of two entries that now share a mail or a username, the one whose
  // account it is keeps it, and the newcomer is the one left out.
  const known = (p: SourcePerson) => (byId.has(`person:${p.entryId}`) ? 0 : 1);
  for (const p of [...snap.people].sort((a, b) => known(a) - known(b))) {
    const entry = byId.get(`person:${p.entryId}`);
    if (entry) {
      // Still in the directory: never disabled as gone, even when its update below is refused.
      present.add(entry.id);
      const known = accounts.get(entry.id);
      if (known) accountOfDn.set(dnKey(p.dn), known);
    }
    try {
      const account = entry ? await updatePerson(tx, p, entry, accounts.get(entry.id), events) : await createPerson(tx, make, source, p, events);
      if (account === null) {
        report.people.unchanged++;
        continue;
      }
      if (entry) {
        if (entry.dn !== p.dn) await updateEntry(tx, entry.id, { dn: p.dn });
        if (entry.gone_at !== null) {
          await updateEntry(tx, entry.id, { gone_at: null });
          if (await applyDisabled(tx, account.row, false)) {
            report.people.enabled++;
            events.enabled.push(account.row.reference_id);
          }
        }
        if (account.changed) report.people.updated++;
        else report.people.unchanged++;
      } else report.people.created++;
      accountOfDn.set(dnKey(p.dn), account.row);
    } catch (err) {
      report.people.skipped++;
      skip(p.dn, refusal(err));
    }
  }

  // Groups: made or renamed; then their members and the groups inside them are the directory's.
  const groupOfDn = new Map<string, GroupRow>();
  const groupsPresent = new Set<number>();
  for (const g of snap.groups) {
    const entry = byId.get(`group:${g.entryId}`);
    if (entry) {
      // Still in the directory: never removed as gone, even when its rename below is refused.
      groupsPresent.add(entry.id);
      const known = entry.usergroup_id === null ? undefined : await findGroupById(tx, entry.usergroup_id);
      if (known) groupOfDn.set(dnKey(g.dn), known);
    }
    try {
      let group: GroupRow | undefined;
      if (entry) {
        const found = entry.usergroup_id === null ? undefined : await findGroupById(tx, entry.usergroup_id);
        if (found && found.name !== g.name) {
          const renamed = await renameGroupIn(tx, writer, found.reference_id, g.name);
          group = renamed.group;
          report.groups.renamed++;
          events.groupsRenamed.push(group);
        } else group = found;
        if (entry.dn !== g.dn) await updateEntry(tx, entry.id, { dn: g.dn });
      } else {
        group = await createGroupIn(tx, actor, { name: g.name, ownerId: null });
        await insertEntry(tx, { source_id: source.id, kind: 'group', entry_id: g.entryId, dn: g.dn, account_id: null, usergroup_id: group.id });
        report.groups.created++;
        events.groupsCreated.push(group);
      }
      if (group) groupOfDn.set(dnKey(g.dn), group);
    } catch (err) {
      report.groups.skipped++;
      skip(g.dn, refusal(err));
    }
  }
  for (const g of snap.groups) {
    const group = groupOfDn.get(dnKey(g.dn));
    if (!group) continue;
    const wanted = new Map<number, AccountRow>();
    const wantedGroups = new Map<number, GroupRow>();
    for (const m of g.members) {
      const account = accountOfDn.get(m);
      if (account) wanted.set(account.id, account);
      const inner = groupOfDn.get(m);
      if (inner) wantedGroups.set(inner.id, inner);
    }
    const current = await membersOf(tx, group.id);
    const added: string[] = [];
    const removed: string[] = [];
    for (const [id, account] of wanted) {
      if (current.some((c) => c.id === id)) continue;
      await addMembership(tx, id, group.id, membership);
      added.push(account.reference_id);
    }
    for (const c of current) {
      if (wanted.has(c.id)) continue;
      if (await removeMembership(tx, c.id, group.id)) removed.push(c.reference_id);
    }
    report.members.added += added.length;
    report.members.removed += removed.length;
    if (added.length > 0) events.members.push({ group, accounts: added, change: 'add' });
    if (removed.length > 0) events.members.push({ group, accounts: removed, change: 'remove' });
    const children = await childGroups(tx, group.id);
    const nestedIn: GroupRow[] = [];
    for (const [id, inner] of wantedGroups) {
      if (children.some((c) => c.id === id)) continue;
      try {
        if (await addNesting(tx, group.id, id, { parent: group.name, child: inner.name })) nestedIn.push(inner);
      } catch (err) {
        skip(g.dn, `${inner.name} not put inside it: ${refusal(err)}`);
      }
    }
    const out = children.filter((c) => !wantedGroups.has(c.id));
    if (out.length > 0)
      await removeNestings(
        tx,
        out.map((c) => ({ parent_id: group.id, child_id: c.id })),
      );
    report.nestings.added += nestedIn.length;
    report.nestings.removed += out.length;
    if (nestedIn.length > 0) events.nestings.push({ group, children: nestedIn, change: 'add' });
    if (out.length > 0) {
      const gone = await Promise.all(out.map((c) => findGroupByReference(tx, c.reference_id)));
      events.nestings.push({ group, children: gone.filter((x): x is GroupRow => x !== undefined), change: 'remove' });
    }
  }

  // What the directory no longer has: groups removed, people disabled (never deleted).
  for (const e of entries) {
    if (e.kind === 'group' && !groupsPresent.has(e.id) && !snap.seenGroups.has(e.entry_id)) {
      const group = e.usergroup_id === null ? undefined : await findGroupById(tx, e.usergroup_id);
      try {
        if (group) {
          await deleteGroupIn(tx, group.reference_id, writer.via);
          events.groupsRemoved.push(group);
          report.groups.removed++;
        }
        await deleteEntry(tx, e.id);
      } catch (err) {
        skip(e.dn, `a group gone from the directory was kept: ${refusal(err)}`);
      }
    }
    // An entry the directory still has is never gone, even when it was left out above.
    if (e.kind === 'person' && !present.has(e.id) && !snap.seenPeople.has(e.entry_id) && e.gone_at === null && e.account_id !== null) {
      const account = await findAccountById(tx, e.account_id);
      try {
        await updateEntry(tx, e.id, { gone_at: now });
        if (account && (await applyDisabled(tx, account, true))) {
          report.people.disabled++;
          events.disabled.push(account.reference_id);
        }
      } catch (err) {
        skip(e.dn, `a person gone from the directory was not disabled: ${refusal(err)}`);
      }
    }
  }
  report.skipped = report.skipped.slice(0, MAX_SKIPPED_SHOWN);
  return { report, events };
}

/** A new entry: its account made by the one maker (accounts/make.ts), the entry recorded. */
async function createPerson(
  tx: Tx,
  make: ReturnType<typeof accountMaker>,
  source: SourceRow,
  p: SourcePerson,
  events: SyncEvents,
): Promise<{ row: AccountRow; changed: boolean }> {
  const made = await make({
    email: p.email,
    name: p.name,
    username: p.username,
    // The password is the directory's (a bind per sign-in), unless --keep-passwords keeps a hash after one.
    passwordHash: NO_PASSWORD,
    source: source.name,
    words: {
      emailTaken: 'an account with this mail exists already (made here, or for another directory entry): it is left alone',
      emailIsUsername: 'this mail is the username of another account',
      usernameTaken: (username) => `the username ${username} is taken by an account made here`,
    },
  });
  await insertEntry(tx, { source_id: source.id, kind: 'person', entry_id: p.entryId, dn: p.dn, account_id: made.id, usergroup_id: null });
  events.made.push(...made.audit);
  return { row: (await findAccountById(tx, made.id))!, changed: true };
}

/** Brings an account up to its entry; null when nothing differs. */
async function updatePerson(
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
