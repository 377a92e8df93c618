/**
 * A configuration file against the store: what `plan` prints, what `apply` changes, and what
 * `export` writes. Plan and apply are one computation: the changes are worked out in the
 * transaction that makes them (holding the accounts lock, so two instances applying one file at
 * once end as one), and a plan is an apply rolled back. Only what an earlier apply made or took
 * over (config_managed) is ever deleted; groups made by hand are listed as unmanaged and left.
 *
 * Kinds so far: groups (managed groups and the groups inside each) and actions (who may run them).
 */
import { AppError } from '../errors';
import { CONFIG, type Actor } from '../actor';
import type { Services } from '../services';
import type { Tx } from '../store/connection';
import { lockAccounts } from '../store/accounts';
import { findGroupsByName, managedGroups, type GroupRow } from '../store/groups';
import { childGroups } from '../store/nesting';
import { listActions, updateRow } from '../store/records';
import { managedNames, markManaged, unmarkManaged } from '../store/config-managed';
import { bit } from '../permission/bits';
import { auditGroupCreated, auditGroupDeleted, createGroupIn, deleteGroupIn, parseGroupName } from '../groups/manage';
import { auditNesting, changeNestingIn } from '../groups/nesting';
import { parseConfig, type ParsedConfig } from './document';
import type { ConfigDocument } from './schema';

export interface PlanLine {
  /** + created, ~ changed, - deleted (or, for an action, no longer managed). */
  sign: '+' | '~' | '-';
  kind: 'group' | 'action';
  name: string;
  detail: string | null;
}

export interface Plan {
  changes: PlanLine[];
  /** Objects of the kinds the file manages that were made by hand: never changed or deleted by it. */
  unmanaged: Array<{ kind: 'group'; name: string }>;
}

/** A rollback that carries the plan out of a transaction that must not commit. */
class PlanOnly extends Error {
  constructor(readonly plan: Plan) {
    super('plan only');
  }
}

const lower = (name: string) => name.toLowerCase();
const listed = (names: readonly string[]) => (names.length === 0 ? 'none' : names.join(', '));

/** What the file says, checked beyond its schema: names valid and once each, inner groups named in the file. */
function wantedGroups(parsed: ParsedConfig): Map<string, { name: string; inside: string[]; index: number }> {
  const wanted = new Map<string, { name: string; inside: string[]; index: number }>();
  (parsed.doc.groups ?? []).forEach((g, index) => {
    let name: string;
    try {
      name = parseGroupName(g.name);
    } catch (err) {
      throw new AppError('invalid_input', `${parsed.at(['groups', index, 'name'])}: ${(err as Error).message}`);
    }
    if (wanted.has(lower(name))) throw new AppError('invalid_input', `${parsed.at(['groups', index, 'name'])}: the group ${name} is named twice`);
    wanted.set(lower(name), { name, inside: g.groups ?? [], index });
  });
  for (const g of wanted.values()) {
    g.inside.forEach((inner, j) => {
      if (!wanted.has(lower(inner))) {
        throw new AppError('invalid_input', `${parsed.at(['groups', g.index, 'groups', j])}: ${inner} is not a group of this file (list it under groups)`);
      }
    });
  }
  return wanted;
}

/** The managed group of a name (ignoring case), if there is one: the one a file's name means. */
async function managedNamed(tx: Tx, name: string): Promise<GroupRow | undefined> {
  const named = await findGroupsByName(tx, name);
  if (named.length === 0) return undefined;
  const managed = new Set((await managedGroups(tx)).map((g) => g.id));
  return named.find((g) => managed.has(g.id) && g.system_role === null);
}

interface Outcome {
  plan: Plan;
  audits: Array<(s: Services, actor: Actor) => Promise<void>>;
}

/** Works the file's changes out and makes them in `tx` (the caller rolls back for a plan). */
async function reconcile(tx: Tx, parsed: ParsedConfig, file: string): Promise<Outcome> {
  await lockAccounts(tx);
  const changes: PlanLine[] = [];
  const audits: Outcome['audits'] = [];
  const wanted = wantedGroups(parsed);
  const managedByFile = await managedNames(tx, 'group');

  // Groups: made or taken over first, so that every group the nesting names exists.
  const rows = new Map<string, GroupRow>();
  for (const [key, g] of wanted) {
    let row = await managedNamed(tx, g.name);
    if (!row) {
      row = await createGroupIn(tx, CONFIG, { name: g.name, ownerId: null });
      const made = row;
      audits.push((s, actor) => auditGroupCreated(s, actor, made));
      changes.push({ sign: '+', kind: 'group', name: g.name, detail: null });
    } else if (!managedByFile.has(key)) {
      changes.push({ sign: '~', kind: 'group', name: g.name, detail: `taken over: managed by ${file} from now on` });
    }
    await markManaged(tx, 'group', key, file);
    rows.set(key, row);
  }
  // The groups inside each: out what the file no longer names, then in what it adds.
  for (const [key, g] of wanted) {
    const row = rows.get(key)!;
    const before = await childGroups(tx, row.id);
    const want = new Set(g.inside.map(lower));
    const out = before.filter((c) => !want.has(lower(c.name)));
    const into = g.inside.filter((n) => !before.some((c) => lower(c.name) === lower(n))).map((n) => rows.get(lower(n))!);
    if (out.length === 0 && into.length === 0) continue;
    if (out.length > 0) {
      const r = await changeNestingIn(
        tx,
        CONFIG,
        row.reference_id,
        out.map((c) => c.reference_id),
        'remove',
      );
      audits.push((s, actor) => auditNesting(s, actor, r.group, r.changed, 'remove'));
    }
    if (into.length > 0) {
      let r;
      try {
        r = await changeNestingIn(
          tx,
          CONFIG,
          row.reference_id,
          into.map((c) => c.reference_id),
          'add',
        );
      } catch (err) {
        throw new AppError((err as AppError).code ?? 'invalid_input', `${parsed.at(['groups', g.index, 'groups'])}: ${(err as Error).message}`);
      }
      const done = r;
      audits.push((s, actor) => auditNesting(s, actor, done.group, done.changed, 'add'));
    }
    const was = before.map((c) => c.name);
    changes.push({ sign: '~', kind: 'group', name: g.name, detail: `groups inside: ${listed(g.inside)} (was ${listed(was)})` });
  }
  // Deleted: what an earlier apply managed and the file no longer names.
  for (const key of managedByFile.keys()) {
    if (wanted.has(key)) continue;
    const row = await managedNamed(tx, key);
    if (row) {
      const gone = await deleteGroupIn(tx, row.reference_id, 'config');
      audits.push((s, actor) => auditGroupDeleted(s, actor, gone));
    }
    await unmarkManaged(tx, 'group', key);
    changes.push({ sign: '-', kind: 'group', name: row?.name ?? key, detail: null });
  }
  const unmanaged = (await managedGroups(tx))
    .filter((g) => g.system_role === null && !wanted.has(lower(g.name)))
    .map((g) => ({ kind: 'group' as const, name: g.name }))
    .sort((a, b) => a.name.localeCompare(b.name));

  // Actions: the permission the file gives, or the guest bit turned on or off.
  const actions = await listActions(tx);
  const managedActions = await managedNames(tx, 'action');
  const named = new Set<string>();
  for (const [name, want] of Object.entries(parsed.doc.actions ?? {})) {
    const [type, action] = name.includes('/') ? name.split('/', 2) : [undefined, name];
    const found = actions.filter((a) => a.action_name === action && (type === undefined || a.on_type === type));
    if (found.length !== 1) {
      throw new AppError(
        'invalid_input',
        `${parsed.at(['actions', name], 'key')}: ${found.length === 0 ? `no action named ${name}` : `${name} names several actions; write it as <type>/${action}`}`,
      );
    }
    const row = found[0];
    const key = `${row.on_type}/${row.action_name}`;
    named.add(key);
    const next = want.permission ?? (want.guest ? row.permission | bit('guest', 'execute') : row.permission & ~bit('guest', 'execute'));
    if (next !== row.permission) {
      await updateRow(tx, 'action', row.id, { permission: next });
      audits.push((s, actor) =>
        s.audit.record('permission_changed', actor, { account: null, record_type: 'action', record: row.reference_id, permission: next }),
      );
      changes.push({ sign: '~', kind: 'action', name, detail: `permission ${next} (was ${row.permission})` });
    } else if (!managedActions.has(key)) {
      changes.push({ sign: '~', kind: 'action', name, detail: `taken over: managed by ${file} from now on` });
    }
    await markManaged(tx, 'action', key, file);
  }
  for (const key of managedActions.keys()) {
    if (named.has(key)) continue;
    await unmarkManaged(tx, 'action', key);
    changes.push({ sign: '-', kind: 'action', name: key, detail: 'no longer managed (its permission stays)' });
  }
  return { plan: { changes, unmanaged }, audits };
}

/** What applying the file would change: the same computation as apply, rolled back. */
export async function planConfig(s: Services, text: string, file: string): Promise<Plan> {
  const parsed = await parseConfig(text, file);
  try {
    await s.store.transaction(async (tx) => {
      throw new PlanOnly((await reconcile(tx, parsed, file)).plan);
    });
  } catch (err) {
    if (err instanceof PlanOnly) return err.plan;
    throw err;
  }
  throw new AppError('internal', 'the plan did not roll back');
}

/** Makes the store match the file, in one transaction; audited once it has committed. */
export async function applyConfig(s: Services, actor: Actor, text: string, file: string): Promise<Plan> {
  const parsed = await parseConfig(text, file);
  const outcome = await s.store.transaction((tx) => reconcile(tx, parsed, file));
  for (const audit of outcome.audits) await audit(s, actor);
  return outcome.plan;
}

/** What an operator configures, as a file: the managed groups with the groups inside them, and every action's permission. */
export async function exportConfig(s: Services): Promise<ConfigDocument> {
  const tx = s.store.root;
  const groups = (await managedGroups(tx)).filter((g) => g.system_role === null).sort((a, b) => a.name.localeCompare(b.name));
  const doc: ConfigDocument = { version: 1 };
  if (groups.length > 0) {
    doc.groups = [];
    for (const g of groups) {
      const inside = (await childGroups(tx, g.id)).map((c) => c.name);
      doc.groups.push(inside.length > 0 ? { name: g.name, groups: inside } : { name: g.name });
    }
  }
  const actions = await listActions(tx);
  const count = (name: string) => actions.filter((a) => a.action_name === name).length;
  doc.actions = Object.fromEntries(
    actions.map((a) => [count(a.action_name) > 1 ? `${a.on_type}/${a.action_name}` : a.action_name, { permission: a.permission }]),
  );
  return doc;
}
