/**
 * `groups:` managed groups, each with the groups directly inside it. A group of the file's name
 * made by hand is taken over; a group an earlier apply made and the file no longer names is
 * deleted; people's memberships are never the file's.
 */
import { AppError } from '../../errors';
import { CONFIG } from '../../actor';
import type { Tx } from '../../store/connection';
import { managedGroups, type GroupRow } from '../../store/groups';
import { childGroups } from '../../store/nesting';
import { managedNames, markManaged, unmarkManaged } from '../../store/config-managed';
import { auditGroupCreated, auditGroupDeleted, createGroupIn, deleteGroupIn, parseGroupName } from '../../groups/manage';
import { auditNesting, changeNestingIn } from '../../groups/nesting';
import { groupNameIndex } from '../../groups/names';
import type { ParsedConfig } from '../document';
import { droppedBy, listed, noResult, takeOverNote, type ConfigKind } from '../kind';

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
        const note = takeOverNote(managedByFile, key, file);
        if (note !== null) result.changes.push({ sign: '~', kind: 'group', name: g.name, detail: note });
      }
      await markManaged(tx, 'group', key, file, made);
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
        result.audits.push((s, actor) => auditNesting(s, actor, r.group, r.changed, 'remove'));
      }
      if (into.length > 0) {
        const r = await changeNestingIn(
          tx,
          CONFIG,
          row.reference_id,
          into.map((c) => c.reference_id),
          'add',
        ).catch((err: AppError) => {
          throw new AppError(err.code ?? 'invalid_input', `${parsed.at(['groups', g.index, 'groups'])}: ${err.message}`);
        });
        result.audits.push((s, actor) => auditNesting(s, actor, r.group, r.changed, 'add'));
      }
      result.changes.push({ sign: '~', kind: 'group', name: g.name, detail: `groups inside: ${listed(g.inside)} (was ${listed(before.map((c) => c.name))})` });
    }
    // Deleted: what an earlier apply managed and the file no longer names.
    const gone = droppedBy(managedByFile, (key) => wanted.has(key), file);
    for (const key of gone.release) {
      await unmarkManaged(tx, 'group', key);
      result.changes.push({ sign: '-', kind: 'group', name: existing.get(key)?.name ?? key, detail: 'no longer managed (made by hand: kept)' });
    }
    for (const key of gone.remove) {
      const row = existing.get(key);
      if (row) {
        const deleted = await deleteGroupIn(tx, row.reference_id, 'config');
        result.audits.push((s, actor) => auditGroupDeleted(s, actor, deleted));
      }
      await unmarkManaged(tx, 'group', key);
      result.changes.push({ sign: '-', kind: 'group', name: row?.name ?? key, detail: null });
    }
    result.unmanaged = [...existing.values()]
      .filter((g) => !wanted.has(lower(g.name)) && !managedByFile.has(lower(g.name)))
      .map((g) => ({ kind: 'group', name: g.name }))
      .sort((a, b) => a.name.localeCompare(b.name));
    result.unmanaged.push(...gone.others.map((o) => ({ kind: 'group', name: existing.get(o.key)?.name ?? o.key, file: o.file })));
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
