/**
 * Moving in from another server (contract section 24): `gatehouse import --from FORMAT FILE`.
 * The file is read by its format's reader, every person checked (plan.ts), then written:
 * the groups in one transaction, the people in transactions of BATCH; a batch that fails as a
 * whole (a race with a signup, a store error) is written again one person at a time, so a bad row
 * never takes others with it. A dry run does the same work in one transaction and rolls it back.
 * Audited after each commit: account_imported per account made, and the groups' own events, the
 * batch's together (Audit.recordAll: a few inserts per batch, each event still its own row,
 * webhook message and SCIM push). An account made records the format as its origin (the one maker:
 * accounts/make.ts, through write.ts).
 */
import { isAppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { lockAccounts } from '../store/accounts';
import type { GroupRow } from '../store/groups';
import { auditGroupCreated } from '../groups/manage';
import { auditNesting } from '../groups/nesting';
import { memberEvents } from '../groups/members';
import type { AuditEntry } from '../audit';
import { readCsv } from './csv';
import { readAuthelia } from './authelia';
import { readAuth0 } from './auth0';
import { readKeycloak } from './keycloak';
import { checkPeople, type PlannedPerson } from './plan';
import type { ImportFormat, Source } from './source';
import { openWriters, writeGroups, writePerson, type GroupMap, type GroupOutcome, type PersonOutcome, type RunOptions } from './write';

export { IMPORT_FORMATS, type ImportFormat } from './source';

const BATCH = 500;

export interface ImportOptions {
  format: ImportFormat;
  /** The file's text. */
  text: string;
  dryRun?: boolean;
  overwrite?: boolean;
  /** Makes people even when their address looks like another account's (--allow-lookalike). */
  allowLookalike?: boolean;
}

export interface ImportedPerson {
  /** Where the person is in the file ("row 3", "user ann"), control characters removed. */
  at: string;
  email: string;
  outcome: 'created' | 'updated' | 'unchanged' | 'skipped';
  reason?: string;
  /** The account's reference id (not in a dry run's made accounts). */
  account?: string;
}

export interface ImportReport {
  format: ImportFormat;
  dry_run: boolean;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  groups: GroupOutcome[];
  people: ImportedPerson[];
}

export interface ImporterOperations {
  /** Reads the file and brings its people and groups in (the shell's actor: administrators only). */
  run(actor: Actor, options: ImportOptions): Promise<ImportReport>;
}

function read(format: ImportFormat, text: string): Promise<Source> | Source {
  switch (format) {
    case 'csv':
      return readCsv(text);
    case 'authelia':
      return readAuthelia(text);
    case 'auth0':
      return readAuth0(text);
    case 'keycloak':
      return readKeycloak(text);
  }
}

/** Thrown inside a dry run's transaction to roll it back, with what it found. */
class DryRun {
  constructor(readonly value: unknown) {}
}

interface Written {
  index: number;
  result: PersonOutcome;
}

export function importerOperations(s: Services): ImporterOperations {
  const writeBatch = async (actor: Actor, batch: Array<{ index: number; person: PlannedPerson }>, groups: GroupMap, run: RunOptions) => {
    const written = await s.store.transaction(async (tx) => {
      await lockAccounts(tx);
      const w = openWriters(tx, actor, run);
      const out: Written[] = [];
      for (const { index, person } of batch) out.push({ index, result: await writePerson(w, tx, person, groups, run) });
      return out;
    });
    await auditWritten(actor, written);
    return written;
  };

  const auditWritten = async (actor: Actor, written: readonly Written[]) => {
    // The order one event at a time had: the accounts made, then each group's new members.
    const events: AuditEntry[] = [];
    const joins = new Map<number, { group: GroupRow; accounts: string[] }>();
    for (const { result } of written) {
      events.push(...(result.made ?? []));
      for (const g of result.joined) {
        const entry = joins.get(g.id) ?? { group: g, accounts: [] };
        entry.accounts.push(result.account!);
        joins.set(g.id, entry);
      }
    }
    for (const { group, accounts } of joins.values()) events.push(...memberEvents(group, accounts, 'add'));
    await s.audit.recordAll(actor, events);
  };

  return {
    async run(actor, options) {
      requireAdministrator(actor, 'import accounts');
      const format = options.format;
      const source = await read(format, options.text);
      const checked = checkPeople(source);
      const people: ImportedPerson[] = checked.map((c) =>
        c.ok ? { at: c.person.at, email: c.person.email, outcome: 'skipped' } : { at: c.at, email: c.email, outcome: 'skipped', reason: c.reason },
      );
      const todo = checked.flatMap((c, index) => (c.ok ? [{ index, person: c.person }] : []));
      // Only the groups someone is in, and those they sit inside, are brought (a Keycloak realm's unused groups stay behind).
      const used = new Set(todo.flatMap((t) => t.person.groups));
      for (const g of [...source.groups].reverse()) if (used.has(g.key) && g.parent !== null) used.add(g.parent);
      const groups = source.groups.filter((g) => used.has(g.key));
      const run: RunOptions = { format, overwrite: options.overwrite === true, allowLookalike: options.allowLookalike === true };
      const apply = (written: readonly Written[]) => {
        for (const { index, result } of written) Object.assign(people[index], { outcome: result.outcome, reason: result.reason, account: result.account });
      };

      let groupOutcomes: GroupOutcome[];
      if (options.dryRun) {
        // Everything in one transaction, rolled back: the report is what a real run would say.
        const caught = await s.store
          .transaction(async (tx) => {
            await lockAccounts(tx);
            const g = await writeGroups(tx, actor, groups);
            const w = openWriters(tx, actor, run);
            const out: Written[] = [];
            for (const { index, person } of todo) out.push({ index, result: await writePerson(w, tx, person, g.map, run) });
            throw new DryRun({ outcomes: g.outcomes, out });
          })
          .catch((err: unknown) => {
            if (err instanceof DryRun) return err.value as { outcomes: GroupOutcome[]; out: Written[] };
            throw err;
          });
        groupOutcomes = caught.outcomes;
        apply(caught.out.map((w) => ({ ...w, result: { ...w.result, account: w.result.outcome === 'created' ? undefined : w.result.account } })));
      } else {
        const g = await s.store.transaction(async (tx) => {
          await lockAccounts(tx);
          return writeGroups(tx, actor, groups);
        });
        for (const group of g.made) await auditGroupCreated(s, actor, group);
        for (const [parent, child] of g.nested) await auditNesting(s, actor, parent, [child], 'add');
        groupOutcomes = g.outcomes;
        for (let i = 0; i < todo.length; i += BATCH) {
          const batch = todo.slice(i, i + BATCH);
          try {
            apply(await writeBatch(actor, batch, g.map, run));
          } catch (err) {
            // A store that is down fails every person alike: say so once.
            if (isAppError(err) && err.code === 'unavailable') throw err;
            // One person spoiled the batch: each again on its own, and only that one is skipped.
            for (const one of batch) {
              try {
                apply(await writeBatch(actor, [one], g.map, run));
              } catch (err) {
                people[one.index].reason = `not written: ${(err as { message?: string }).message?.slice(0, 120) ?? 'a store error'}`;
              }
            }
          }
        }
      }
      const count = (o: ImportedPerson['outcome']) => people.filter((p) => p.outcome === o).length;
      return {
        format,
        dry_run: options.dryRun === true,
        created: count('created'),
        updated: count('updated'),
        unchanged: count('unchanged'),
        skipped: count('skipped'),
        groups: groupOutcomes,
        people,
      };
    },
  };
}
