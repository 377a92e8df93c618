/**
 * `groups:` managed groups, each with the groups directly inside it. A group of the file's name
 * made by hand is taken over; a group an earlier apply made and the file no longer names is
 * deleted; people's memberships are never the file's.
 */
import { AppError, isAppError, reworded } from '../../errors';
import { CONFIG } from '../../actor';
import type { Tx } from '../../store/connection';
import { managedGroups, type GroupRow } from '../../store/groups';
import { childGroups, type NestedGroup } from '../../store/nesting';
import { managedNames, markManaged } from '../../store/config-managed';
import { auditGroupCreated, auditGroupDeleted, createGroupIn, deleteGroupIn, parseGroupName } from '../../groups/manage';
import { auditNesting, changeNestingIn } from '../../groups/nesting';
import { groupNameIndex } from '../../groups/names';
import type { ParsedConfig } from '../document';
import { dropUnnamed, listed, noResult, noteTakeOver, type ConfigKind } from '../kind';

const name = { type: 'string', minLength: 1, maxLength: 100 } as const;

interface ConfigGroup {
  name: string;
  groups?: string[];
}

const lower = (n: string) => n.toLowerCase();

/** What the file says, checked beyond its schema: names valid and once each, inner groups named in the file. */
function wantedGroups(parsed: ParsedConfig): Map<string, { name: string; inside: string[]; index: number }> {
  const wanted = new Map<string, { name: string; inside: string[]; index: number }>();
  ((parsed.doc.groups as ConfigGroup[] | undefined) ?? []).forEach((g, index) => {
    let n: string;
    try {
      n = parseGroupName(g.name);
    } catch (err) {
      throw new AppError('invalid_input', `${parsed.at(['groups', index, 'name'])}: ${(err as Error).message}`);
    }
    if (wanted.has(lower(n))) throw new AppError('invalid_input', `${parsed.at(['groups', index, 'name'])}: the group ${n} is named twice`);
    wanted.set(lower(n), { name: n, inside: g.groups ?? [], index });
  });
  for (const g of wanted.values()) {
    const seen = new Set<string>();
    g.inside.forEach((inner, j) => {
      if (seen.has(lower(inner)))
        throw new AppError('invalid_input', `${parsed.at(['groups', g.index, 'groups', j])}: ${inner} is named twice (names ignore case)`);
      seen.add(lower(inner));
      if (!wanted.has(lower(inner))) {
        throw new AppError('invalid_input', `${parsed.at(['groups', g.index, 'groups', j])}: ${inner} is not a group of this file (list it under groups)`);
      }
    });
  }
  return wanted;
}

/** The managed groups (not the built-in ones) by lower-case name: read once per apply, kept up to date by it. */
async function managedByName(tx: Tx): Promise<Map<string, GroupRow>> {
  const byName = new Map<string, GroupRow>();
  for (const g of await managedGroups(tx)) if (g.system_role === null && !byName.has(lower(g.name))) byName.set(lower(g.name), g);
  return byName;
}

/** A managed group whose inner groups the file changes: the edges to take out and to put in (with their entry in its list). */
interface NestingChange {
  row: GroupRow;
  name: string;
  index: number;
  inside: string[];
  before: NestedGroup[];
  out: NestedGroup[];
  into: Array<{ child: GroupRow; entry: number }>;
}

/**
 * What the file changes in each group's inner groups, against the store before any of it is
 * changed. The file's list is the groups inside it that a file manages or names: a group no file
 * manages, put in beside them since this file took the group over (an import's subgroup:
 * groups/nesting.ts), is not the file's and is left where it is. When the file takes a group over,
 * every inner group it does not name is taken out, as before.
 */
async function nestingChanges(
  tx: Tx,
  wanted: ReturnType<typeof wantedGroups>,
  rows: ReadonlyMap<string, GroupRow>,
  managedByFile: ReadonlyMap<string, { file: string }>,
  file: string,
): Promise<NestingChange[]> {
  const changes: NestingChange[] = [];
  for (const [key, g] of wanted) {
    const row = rows.get(key)!;
    const takenOver = managedByFile.get(key)?.file !== file;
    // A file's group (one it names now, or any file managed before) inside it is the file's to keep or take out.
    const before = (await childGroups(tx, row.id)).filter((c) => takenOver || wanted.has(lower(c.name)) || managedByFile.has(lower(c.name)));
    const want = new Set(g.inside.map(lower));
    const out = before.filter((c) => !want.has(lower(c.name)));
    const into = g.inside
      .map((n, entry) => ({ n, entry }))
      .filter(({ n }) => !before.some((c) => lower(c.name) === lower(n)))
      .map(({ n, entry }) => ({ child: rows.get(lower(n))!, entry }));
    if (out.length > 0 || into.length > 0) changes.push({ row, name: g.name, index: g.index, inside: g.inside, before, out, into });
  }
  return changes;
}

export const groupsKind: ConfigKind = {
  key: 'groups',
  schema: {
    description: 'Managed groups, each with the groups directly inside it (those must be in this list too).',
    type: 'array',
    maxItems: 10000,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { ...name, description: 'The group name (names ignore case).' },
        groups: { type: 'array', maxItems: 100, uniqueItems: true, items: name, description: 'The groups directly inside this one.' },
      },
    },
  },

  async reconcile({ tx, parsed, file }) {
    const result = noResult();
    const wanted = wantedGroups(parsed);
    const managedByFile = await managedNames(tx, 'group');
    const existing = await managedByName(tx);
    const names = await groupNameIndex(tx);
    // Made or taken over first, so that every group the nesting names exists.
    const rows = new Map<string, GroupRow>();
    for (const [key, g] of wanted) {
      let row = existing.get(key);
      const made = !row;
      if (!row) {
        const created = await createGroupIn(tx, CONFIG, { name: g.name, ownerId: null }, names);
        row = created;
        existing.set(key, created);
        result.audits.push((s, actor) => auditGroupCreated(s, actor, created));
        result.changes.push({ sign: '+', kind: 'group', name: g.name, detail: null });
      } else {
        noteTakeOver(result, managedByFile, key, file, 'group', g.name);
      }
      await markManaged(tx, 'group', key, file, made);
      rows.set(key, row);
    }
    // The nesting is checked as the file leaves it, not step by step: every edge the file no longer
    // wants goes first (for every group), then every group it dropped, and only then are the new
    // edges added. Each addition then meets a part of the end state, so its cycle, depth and
    // ancestor checks hold exactly when the end state has none: a file that turns nesting around
    // (a ⊃ b to b ⊃ a) applies, one whose end state has a cycle is refused at the entry closing it.
    const nestings = await nestingChanges(tx, wanted, rows, managedByFile, file);
    for (const n of nestings) {
      if (n.out.length === 0) continue;
      const r = await changeNestingIn(
        tx,
        CONFIG,
        n.row.reference_id,
        n.out.map((c) => c.reference_id),
        'remove',
      );
      result.audits.push((s, actor) => auditNesting(s, actor, r.group, r.changed, 'remove'));
    }
    // Deleted: what an earlier apply managed and the file no longer names.
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'group',
      objects: [...existing.values()].map((g) => [lower(g.name), g.name] as const),
      managed: managedByFile,
      named: wanted,
      shown: (key) => existing.get(key)?.name ?? key,
      remove: {
        stored: existing,
        drop: async (row) => {
          const deleted = await deleteGroupIn(tx, row.reference_id, 'config');
          result.audits.push((s, actor) => auditGroupDeleted(s, actor, deleted));
        },
      },
    });
    for (const n of nestings) {
      for (const { child, entry } of n.into) {
        const r = await changeNestingIn(tx, CONFIG, n.row.reference_id, [child.reference_id], 'add').catch((err: unknown) => {
          if (!isAppError(err)) throw err;
          throw reworded(err, `${parsed.at(['groups', n.index, 'groups', entry])}: ${err.message}`);
        });
        result.audits.push((s, actor) => auditNesting(s, actor, r.group, r.changed, 'add'));
      }
      result.changes.push({
        sign: '~',
        kind: 'group',
        name: n.name,
        detail: `groups inside: ${listed(n.inside)} (was ${listed(n.before.map((c) => c.name))})`,
      });
    }
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const tx = s.store.root;
    const groups = (await managedGroups(tx)).filter((g) => g.system_role === null).sort((a, b) => a.name.localeCompare(b.name));
    if (groups.length === 0) return undefined;
    const out: ConfigGroup[] = [];
    for (const g of groups) {
      const inside = (await childGroups(tx, g.id)).map((c) => c.name);
      out.push(inside.length > 0 ? { name: g.name, groups: inside } : { name: g.name });
    }
    return out;
  },
};
