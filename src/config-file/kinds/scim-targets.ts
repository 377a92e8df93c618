/**
 * `scim_targets:` apps Gatehouse provisions over SCIM (push targets), each named by its name, with
 * its endpoint, the token it gave (a reference, never the value) and the managed groups whose
 * members it holds. The rules are the shell's (`scim target add`). A target of the file's name made
 * by hand is taken over; one an earlier apply made and the file no longer names is removed. A
 * target added, or whose address, token or groups changed, is synced once the apply has committed,
 * as `scim target add` does: the sync reads the committed store and queues its messages.
 */
import { randomUUID } from 'node:crypto';
import { AppError, isAppError, reworded } from '../../errors';
import { shownUrl, parseWebhookUrl } from '../../runtime/targets';
import { resolveGateGroup } from '../../groups/manage';
import { findGroupsByReference } from '../../store/groups';
import { deleteScimTarget, findScimTarget, insertScimTarget, listScimTargets, updateScimTarget, type ScimTargetRow } from '../../store/scim';
import { managedNames, markManaged } from '../../store/config-managed';
import { assertTokenProtected, parseTargetToken, queueSync } from '../../scim/targets';
import { scimName } from '../../scim/names';
import type { Actor } from '../../actor';
import type { Services } from '../../services';
import type { Tx } from '../../store/connection';
import type { ParsedConfig } from '../document';
import { dropUnnamed, listed, noResult, noteTakeOver, refChange, type ConfigKind } from '../kind';
import { sameSecret, SECRET_REF_SCHEMA, type SecretRef } from '../secrets';
import { atKey, checkLiteralTarget, envNames, sameSet } from './common';

interface ConfigTarget {
  name: string;
  url: string;
  token: SecretRef;
  groups?: string[];
}

/** config_managed's key of a target (the shell's refusals look names up in lower case). */
const keyOf = (name: string) => name.toLowerCase();

interface Wanted {
  index: number;
  name: string;
  url: string;
}

/** The file's targets, checked beyond the schema: names and URLs valid, names once each (ignoring case). */
function wantedTargets(parsed: ParsedConfig, allowPrivate: readonly string[]): Map<string, Wanted> {
  const wanted = new Map<string, Wanted>();
  ((parsed.doc.scim_targets as ConfigTarget[] | undefined) ?? []).forEach((entry, index) => {
    const at = (key: string) => ['scim_targets', index, key];
    let name: string;
    let url: string;
    try {
      name = scimName(entry.name);
    } catch (err) {
      atKey(parsed, at('name'), 'name', err);
    }
    try {
      url = parseWebhookUrl(entry.url);
      assertTokenProtected(new URL(url));
    } catch (err) {
      atKey(parsed, at('url'), 'url', err);
    }
    checkLiteralTarget(new URL(url), allowPrivate, parsed.at(at('url')));
    // Names differing only in case are one name here: the shell's refusals compare them ignoring case.
    if (wanted.has(keyOf(name))) throw new AppError('invalid_input', `${parsed.at(at('name'))}: the SCIM target ${name} is named twice`);
    wanted.set(keyOf(name), { index, name, url });
  });
  return wanted;
}

/** The groups of a target, by id, each at its own line: the same rule `scim target add` applies (a managed group). */
async function groupIds(tx: Tx, parsed: ParsedConfig, index: number, names: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [j, g] of names.entries()) {
    const group = await resolveGateGroup(tx, g).catch((err: Error) => {
      const message = `${parsed.at(['scim_targets', index, 'groups', j])}: ${err.message}`;
      throw isAppError(err) ? reworded(err, message) : new AppError('invalid_input', message);
    });
    if (!ids.includes(group.reference_id)) ids.push(group.reference_id);
  }
  return ids;
}

/** A target's groups by name; one since deleted by its id, so that applying the file is refused rather than widened to everyone. */
async function groupNames(tx: Tx, ids: readonly string[]): Promise<string[]> {
  const groups = await findGroupsByReference(tx, ids);
  return ids.map((id) => groups.find((g) => g.reference_id === id)?.name ?? `(deleted group ${id})`);
}

/** The variable `config export` names for each target's token, by its id (names in order, _2, _3… after a name two share). */
function tokenVariables(rows: readonly ScimTargetRow[]): { rows: ScimTargetRow[]; names: Map<string, string> } {
  const sorted = [...rows].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = envNames(
    'GATEHOUSE_SCIM_TOKEN_',
    sorted.map((r) => r.name),
  );
  return { rows: sorted, names: new Map(sorted.map((r, i) => [r.reference_id, names[i]])) };
}

const everyoneOr = (names: readonly string[]) => (names.length === 0 ? 'everyone' : listed(names));

/** After the commit: everyone the target should hold, queued (as `scim target add` and `sync` do), then audited. */
const syncAfter = (name: string, event: 'scim_target_added' | 'scim_target_synced') => async (s: Services, actor: Actor) => {
  const row = await findScimTarget(s.store.root, name);
  if (!row) return;
  await s.audit.record(event, actor, { account: null, scim_target: row.reference_id, name: row.name });
  await queueSync(s, row);
};

export const scimTargetsKind: ConfigKind = {
  key: 'scim_targets',
  schema: {
    description:
      'Apps Gatehouse provisions over SCIM 2.0 (push targets), each named by its name, with the token the app gave as a reference. A target made by hand with the same name is taken over. Added or changed, a target is synced once the file is applied. `config export` writes each token as the reference its file applied; one made by hand as {env: GATEHOUSE_SCIM_TOKEN_<NAME>}: the name in capitals, other characters as _, and _2, _3… after a name two targets share.',
    type: 'array',
    maxItems: 100,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'url', 'token'],
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          description: 'What the shell names it by (scim target sync NAME): 1 to 64 letters, digits, spaces, dots, dashes or underscores (names ignore case).',
        },
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 2000,
          description: "The app's SCIM base URL (…/scim/v2): https, or http to an address inside the network (which needs webhook-allow-private).",
        },
        token: { ...SECRET_REF_SCHEMA, description: `The bearer token the app gave: ${SECRET_REF_SCHEMA.description}` },
        groups: {
          type: 'array',
          maxItems: 100,
          uniqueItems: true,
          items: { type: 'string', minLength: 1, maxLength: 100 },
          description: 'Only members of these managed groups (and these groups) are pushed (left out: everyone).',
        },
      },
    },
  },

  async reconcile({ s, tx, parsed, file, secret }) {
    const result = noResult();
    const wanted = wantedTargets(parsed, s.config.webhookAllowPrivate);
    const managed = await managedNames(tx, 'scim_target');
    const stored = await listScimTargets(tx);
    const byKey = new Map<string, ScimTargetRow[]>();
    for (const row of stored) byKey.set(keyOf(row.name), [...(byKey.get(keyOf(row.name)) ?? []), row]);
    const variables = tokenVariables(stored).names;
    for (const [key, w] of wanted) {
      const at = (k: string) => ['scim_targets', w.index, k];
      const found = byKey.get(key) ?? [];
      const other = found.find((r) => r.name !== w.name);
      if (other) {
        throw new AppError('invalid_input', `${parsed.at(at('name'))}: a SCIM target ${other.name} exists (names differing only in case are refused)`);
      }
      const before = found[0];
      const recorded = managed.get(key);
      const entry = (parsed.doc.scim_targets as ConfigTarget[])[w.index];
      const value = await secret(
        at('token'),
        before && {
          kind: 'scim_target',
          name: w.name,
          current: before.token,
          stored: recorded?.refs?.token ?? null,
          placeholder: variables.get(before.reference_id)!,
        },
      );
      let token: string;
      try {
        token = parseTargetToken(value);
      } catch (err) {
        atKey(parsed, at('token'), 'token', err);
      }
      const groups = await groupIds(tx, parsed, w.index, entry.groups ?? []);
      if (!before) {
        const row = await insertScimTarget(tx, { reference_id: randomUUID(), name: w.name, url: w.url, token, groups: JSON.stringify(groups) });
        if (!row) throw new AppError('conflict', `${parsed.at(at('name'))}: a SCIM push target named ${w.name} exists already`);
        result.audits.push(syncAfter(w.name, 'scim_target_added'));
        result.changes.push({ sign: '+', kind: 'scim_target', name: w.name, detail: null });
        await markManaged(tx, 'scim_target', key, file, true, { token: entry.token });
        continue;
      }
      const changed: string[] = [];
      const update: Parameters<typeof updateScimTarget>[2] = {};
      if (before.url !== w.url) {
        changed.push(`url: ${shownUrl(w.url)} (was ${shownUrl(before.url)})`);
        update.url = w.url;
      }
      const was = JSON.parse(before.groups) as string[];
      if (!sameSet(was, groups)) {
        changed.push(`groups: ${everyoneOr(entry.groups ?? [])} (was ${everyoneOr(await groupNames(tx, was))})`);
        update.groups = JSON.stringify(groups);
      }
      // Compared here, never shown: the plan says only that it changed.
      if (!sameSecret(before.token, token)) {
        changed.push('token changed');
        update.token = token;
      }
      if (changed.length > 0) {
        await updateScimTarget(tx, before.id, update);
        // What it should hold may differ now (or lie behind a new address or token): synced, as after `scim target add`.
        result.audits.push(syncAfter(w.name, 'scim_target_synced'));
      }
      if (recorded?.file === file) {
        const moved = refChange('token', recorded.refs?.token, entry.token);
        if (moved !== null) changed.push(moved);
      }
      noteTakeOver(result, managed, key, file, 'scim_target', w.name);
      if (changed.length > 0) result.changes.push({ sign: '~', kind: 'scim_target', name: w.name, detail: changed.join('; ') });
      await markManaged(tx, 'scim_target', key, file, false, { token: entry.token });
    }
    // Removed: what an earlier apply of this file managed and it no longer names.
    const nameOf = (key: string) => byKey.get(key)?.[0]?.name ?? key;
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'scim_target',
      objects: stored.map((r) => [keyOf(r.name), `${r.name} (${shownUrl(r.url)})`] as const),
      managed,
      named: wanted,
      shown: nameOf,
      remove: {
        stored: byKey,
        drop: async (rows) => {
          for (const row of rows) {
            // Its queued messages go with it; what it holds stays there (the app keeps its accounts), as `scim target remove`.
            await deleteScimTarget(tx, row.id);
            result.audits.push((s2, actor) => s2.audit.record('scim_target_removed', actor, { account: null, scim_target: row.reference_id, name: row.name }));
          }
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const { rows, names } = tokenVariables(await listScimTargets(s.store.root));
    if (rows.length === 0) return undefined;
    const managed = await managedNames(s.store.root, 'scim_target');
    const out: ConfigTarget[] = [];
    for (const row of rows) {
      const groups = await groupNames(s.store.root, JSON.parse(row.groups) as string[]);
      // The reference a file applied, as it was; else (made by hand) the variable named for it.
      const token = (managed.get(keyOf(row.name))?.refs?.token as SecretRef | undefined) ?? { env: names.get(row.reference_id)! };
      out.push({ name: row.name, url: row.url, token, ...(groups.length > 0 ? { groups } : {}) });
    }
    return out;
  },
};
