/**
 * Directory sources (LDAP, Active Directory): added, listed, shown, synced and removed by
 * administrators (the shell and the console), and synced on their schedule by a running server.
 * Of several instances over one store, one runs each due sync (claimSync).
 */
import { AppError, isAppError } from '../errors';
import { iso } from '../clock';
import { SOURCE_SYNC, type Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { findAccountByReference, lockAccounts } from '../store/accounts';
import { findGroupByReference } from '../store/groups';
import { isReference } from '../store/reference';
import {
  claimSync,
  deleteSource,
  findSource,
  findSourceById,
  insertSource,
  listSources,
  recordSync,
  setNextSync,
  sourceCounts,
  sourceEntries,
  sourceOfAccount,
  sourceOfGroup,
  type EntryRow,
  type NewSource,
  type SourceRow,
} from '../store/sources';
import { auditGroupCreated, auditGroupDeleted, auditGroupRenamed } from '../groups/manage';
import { auditMembers } from '../groups/members';
import { auditNesting } from '../groups/nesting';
import { CONTROL, DirectoryConnection, parseSourceUrl } from './directory-client';
import { outboundUrl } from '../runtime/targets';
import { readDirectory, writeSnapshot, type Snapshot, type SyncEvents, type SyncReport } from './sync';

export type { SyncReport } from './sync';

export interface SourceInput {
  name: string;
  url: string;
  startTls?: boolean;
  /** PEM of the certificate authority to trust for this directory (else the system's). */
  caCertificate?: string | null;
  bindDn: string;
  bindPassword: string;
  baseDn: string;
  userFilter?: string;
  groupFilter?: string;
  uidAttribute?: string;
  idAttribute?: string;
  /** How often to sync: 30m, 1h, 1d (at least 1m); absent: only on demand. */
  every?: string;
  keepPasswords?: boolean;
}

export interface SourceView {
  name: string;
  url: string;
  start_tls: boolean;
  bind_dn: string;
  base_dn: string;
  user_filter: string;
  group_filter: string;
  uid_attribute: string;
  id_attribute: string;
  every: string | null;
  keep_passwords: boolean;
  people: number;
  gone: number;
  groups: number;
  last_sync_at: string | null;
  last_status: 'ok' | 'failed' | null;
  last_result: unknown;
  next_sync_at: string | null;
  created_at: string;
}

export interface SourceOperations {
  /** Adds a source after checking that its directory answers and accepts its bind. */
  add(actor: Actor, input: SourceInput): Promise<SourceView>;
  list(actor: Actor): Promise<SourceView[]>;
  show(actor: Actor, name: string): Promise<SourceView>;
  /** Removes a source: the accounts and groups it brought stay, as local ones. */
  remove(actor: Actor, name: string): Promise<SourceView>;
  /** Syncs now. */
  /** `allowDepartures`: even when the answer would disable or remove more than a quarter of what the source holds. */
  sync(actor: Actor, name: string, allowDepartures?: boolean): Promise<SyncReport>;
  /** Runs the syncs that are due (a running server calls it on a timer). */
  syncDue(): Promise<void>;
  /**
   * The source that manages an account (by reference_id), and whether its directory no longer has
   * the person (disabled here, and then deletable); null for an account made here.
   */
  ofAccount(actor: Actor, accountReference: string): Promise<{ source: string; gone: boolean } | null>;
  /** The source that manages a group (by reference_id): its name, or null for a group made here. */
  ofGroup(actor: Actor, groupReference: string): Promise<string | null>;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
const ATTRIBUTE = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
const ID_ATTRIBUTES = ['entryUUID', 'objectGUID'];
/** A failed sync is tried again after this long (or at its own period, if shorter). */
const RETRY_MS = 60_000;
const UNITS: Record<string, number> = { m: 60, h: 3600, d: 86400 };

const invalid = (message: string) => new AppError('invalid_input', message);

/** `30m`, `1h`, `1d`: seconds, at least a minute and at most a week. */
export function parseEvery(raw: string): number {
  const m = /^(\d{1,5})([mhd])$/.exec(raw.trim());
  const seconds = m ? Number(m[1]) * UNITS[m[2]] : NaN;
  if (!(seconds >= 60 && seconds <= 7 * 86400)) throw invalid('{--every} is a period such as 15m, 1h or 1d (from 1m to 7d)');
  return seconds;
}

const everyText = (seconds: number | null) => {
  if (seconds === null) return null;
  for (const [unit, n] of [
    ['d', 86400],
    ['h', 3600],
  ] as const) {
    if (seconds % n === 0) return `${seconds / n}${unit}`;
  }
  return `${seconds / 60}m`;
};

/** A filter as an LDAP server takes it: parenthesized, balanced, printable. */
function parseFilter(raw: string, flag: string): string {
  const f = raw.trim();
  let depth = 0;
  let balanced = f.startsWith('(') && f.endsWith(')') && f.length <= 1000 && !new RegExp(CONTROL.source).test(f);
  for (let i = 0; balanced && i < f.length; i++) {
    if (f[i] === '\\') i += 2;
    else if (f[i] === '(') depth++;
    else if (f[i] === ')' && --depth === 0 && i !== f.length - 1) balanced = false;
    if (depth < 0) balanced = false;
  }
  if (!balanced || depth !== 0) throw invalid(`${flag} is an LDAP filter in parentheses, such as (objectClass=inetOrgPerson)`);
  return f;
}

function parseDn(raw: string, flag: string): string {
  const dn = raw.trim();
  if (dn.length === 0 || dn.length > 500 || new RegExp(CONTROL.source).test(dn) || !dn.includes('='))
    throw invalid(`${flag} is a DN such as dc=example,dc=com`);
  return dn;
}

/** The source as stored, from what an operator gave: defaults follow the directory's kind (Active Directory by sAMAccountName). */
export function newSource(input: SourceInput): NewSource {
  if (!NAME.test(input.name)) throw invalid('{--name} is 1 to 40 lower-case letters, digits and dashes');
  const startTls = input.startTls === true;
  // The rule of every address Gatehouse sends to first (no user or password), then a directory's own.
  outboundUrl(input.url, '{--url}', {
    protocols: ['ldaps:', 'ldap:'],
    example: 'ldaps://ldap.example.com',
    proof: '{--bind-dn} and its password say who connects',
  });
  const url = parseSourceUrl(input.url, startTls);
  const uid = input.uidAttribute ?? 'uid';
  if (!ATTRIBUTE.test(uid)) throw invalid('{--uid-attribute} is an attribute name such as uid or sAMAccountName');
  const ad = uid.toLowerCase() === 'samaccountname';
  const id = input.idAttribute ?? (ad ? 'objectGUID' : 'entryUUID');
  const idAttribute = ID_ATTRIBUTES.find((a) => a.toLowerCase() === id.toLowerCase());
  if (!idAttribute) throw invalid('{--id-attribute} is entryUUID or objectGUID');
  if (input.bindPassword === '') throw invalid('the bind password is empty (an empty password is an anonymous bind)');
  if (input.caCertificate != null && !input.caCertificate.includes('-----BEGIN CERTIFICATE-----')) throw invalid('{--ca-file} holds no PEM certificate');
  return {
    name: input.name,
    url,
    start_tls: startTls,
    ca_certificate: input.caCertificate ?? null,
    bind_dn: parseDn(input.bindDn, '{--bind-dn}'),
    bind_password: input.bindPassword,
    base_dn: parseDn(input.baseDn, '{--base-dn}'),
    user_filter: parseFilter(input.userFilter ?? (ad ? '(&(objectCategory=person)(objectClass=user))' : '(objectClass=inetOrgPerson)'), '{--user-filter}'),
    group_filter: parseFilter(
      input.groupFilter ?? (ad ? '(objectClass=group)' : '(|(objectClass=groupOfNames)(objectClass=groupOfUniqueNames))'),
      '{--group-filter}',
    ),
    uid_attribute: uid,
    id_attribute: idAttribute,
    every_seconds: input.every === undefined ? null : parseEvery(input.every),
    keep_passwords: input.keepPasswords === true,
  };
}

/**
 * A directory's answer that would take away more than a quarter of what the source holds (and more
 * than two) is more likely a wrong filter, a bind account that lost its rights or a directory in
 * trouble than a mass departure: the sync stops, changing nothing, until an operator says otherwise.
 */
function assertFewDepartures(source: SourceRow, snap: Snapshot, entries: readonly EntryRow[], allowed: boolean): void {
  if (allowed) return;
  const people = entries.filter((e) => e.kind === 'person' && e.gone_at === null);
  const groups = entries.filter((e) => e.kind === 'group');
  const leaving = people.filter((e) => !snap.seenPeople.has(e.entry_id)).length;
  const going = groups.filter((e) => !snap.seenGroups.has(e.entry_id)).length;
  const many = (n: number, of: number) => n > 2 && n > of / 4;
  if (many(leaving, people.length) || many(going, groups.length) || (leaving > 0 && leaving === people.length)) {
    throw new AppError(
      'conflict',
      `the directory's answer would disable ${leaving} of ${people.length} people and remove ${going} of ${groups.length} groups: nothing was changed. Check the bind DN's rights, {--base-dn} and the filters; if they really left, sync with {--allow-departures}`,
    );
  }
}

export function sourceOperations(s: Services): SourceOperations {
  const view = async (row: SourceRow): Promise<SourceView> => {
    const counts = await sourceCounts(s.store.root, row.id);
    const time = (t: number | null) => (t === null ? null : iso(t));
    return {
      name: row.name,
      url: row.url,
      start_tls: row.start_tls,
      bind_dn: row.bind_dn,
      base_dn: row.base_dn,
      user_filter: row.user_filter,
      group_filter: row.group_filter,
      uid_attribute: row.uid_attribute,
      id_attribute: row.id_attribute,
      every: everyText(row.every_seconds),
      keep_passwords: row.keep_passwords,
      ...counts,
      last_sync_at: time(row.last_sync_at),
      last_status: row.last_status,
      last_result: row.last_result === null ? null : (JSON.parse(row.last_result) as unknown),
      next_sync_at: time(row.next_sync_at),
      created_at: iso(row.created_at),
    };
  };
  const found = async (name: string) => {
    const row = await findSource(s.store.root, name);
    if (!row) throw new AppError('not_found', `no source named ${name.slice(0, 40)}`);
    return row;
  };

  const audit = async (actor: Actor, source: string, e: SyncEvents) => {
    // The accounts made, with the rows the one maker wrote for them (account_imported, naming the source).
    for (const made of e.made) await s.audit.record(made.event, actor, made.fields);
    for (const c of e.changed) await s.audit.record(c.event, actor, { account: c.account, source });
    for (const account of e.disabled) await s.audit.record('account_disabled', actor, { account, source });
    for (const account of e.enabled) await s.audit.record('account_enabled', actor, { account, source });
    for (const g of e.groupsCreated) await auditGroupCreated(s, actor, g);
    for (const g of e.groupsRenamed) await auditGroupRenamed(s, actor, g);
    for (const m of e.members) await auditMembers(s, actor, m.group, m.accounts, m.change);
    for (const n of e.nestings) await auditNesting(s, actor, n.group, n.children, n.change);
    for (const g of e.groupsRemoved) await auditGroupDeleted(s, actor, g);
  };

  const sync = async (actor: Actor, source: SourceRow, allowDepartures = false): Promise<SyncReport> => {
    try {
      const snapshot = await readDirectory(source);
      const { report, events } = await s.store.transaction(async (tx) => {
        await lockAccounts(tx);
        // Removed while the directory was read: nothing of it is written (one step with `source remove`).
        const current = await findSourceById(tx, source.id);
        if (!current || current.name !== source.name) throw new AppError('not_found', `the source ${source.name} was removed while it synced`);
        // Departures are counted against the entries as this transaction sees them: another sync
        // that wrote while this one read the directory is counted, never a list read before it.
        assertFewDepartures(current, snapshot, await sourceEntries(tx, current.id), allowDepartures);
        return writeSnapshot(tx, actor, current, snapshot);
      });
      await recordSync(s.store.root, source.id, 'ok', { ...report, skipped: report.skipped.length });
      // A sync on demand also puts the next scheduled one a whole period away.
      if (source.every_seconds !== null) await setNextSync(s.store.root, source.id, s.clock.now() + source.every_seconds * 1000);
      await audit(actor, source.name, events);
      const { skipped, ...figures } = report;
      await s.audit.record('source_synced', actor, { account: null, source: source.name, result: JSON.stringify({ ...figures, skipped: skipped.length }) });
      s.logger.info('source_synced', { source: source.name, people: report.people.created + report.people.updated + report.people.unchanged });
      return report;
    } catch (err) {
      const message = isAppError(err) ? err.message : 'the sync failed';
      await recordSync(s.store.root, source.id, 'failed', { error: message });
      await s.audit.record('source_sync_failed', actor, { account: null, source: source.name, error: message }, 'warn');
      s.logger.warn('source_sync_failed', { source: source.name, error: message });
      throw err;
    }
  };

  return {
    async add(actor, input) {
      requireAdministrator(actor, 'add directory sources');
      const row = newSource(input);
      // A typo in the URL, the bind DN or its password is said now, not at the first sync.
      const probe = await DirectoryConnection.open(row, 'sync');
      await probe.close();
      const made = await insertSource(s.store.root, row);
      await s.audit.record('source_added', actor, { account: null, source: made.name });
      return view(made);
    },
    async list(actor) {
      requireAdministrator(actor, 'list directory sources');
      return Promise.all((await listSources(s.store.root)).map(view));
    },
    async show(actor, name) {
      requireAdministrator(actor, 'see directory sources');
      return view(await found(name));
    },
    async remove(actor, name) {
      requireAdministrator(actor, 'remove directory sources');
      const row = await found(name);
      const shown = await view(row);
      await s.store.transaction(async (tx) => {
        await lockAccounts(tx);
        await deleteSource(tx, row.id);
      });
      await s.audit.record('source_removed', actor, { account: null, source: row.name });
      return shown;
    },
    async sync(actor, name, allowDepartures) {
      requireAdministrator(actor, 'sync directory sources');
      return sync(actor, await found(name), allowDepartures === true);
    },
    async syncDue() {
      const actor = SOURCE_SYNC;
      const now = s.clock.now();
      for (const source of await listSources(s.store.root)) {
        if (source.every_seconds === null || source.next_sync_at === null || source.next_sync_at > now) continue;
        if (!(await claimSync(s.store.root, source, now + source.every_seconds * 1000))) continue;
        try {
          await sync(actor, source);
        } catch {
          // Said in the log and the audit by sync(); tried again soon, never by disabling anyone.
          await setNextSync(s.store.root, source.id, now + Math.min(RETRY_MS, source.every_seconds * 1000));
        }
      }
    },
    async ofAccount(actor, accountReference) {
      requireAdministrator(actor, 'see directory sources');
      const account = isReference(accountReference) ? await findAccountByReference(s.store.root, accountReference.toLowerCase()) : undefined;
      const managed = account ? await sourceOfAccount(s.store.root, account.id) : null;
      return managed === null ? null : { source: managed.name, gone: managed.gone };
    },
    async ofGroup(actor, groupReference) {
      requireAdministrator(actor, 'see directory sources');
      const group = isReference(groupReference) ? await findGroupByReference(s.store.root, groupReference.toLowerCase()) : undefined;
      return group ? sourceOfGroup(s.store.root, group.id) : null;
    },
  };
}
