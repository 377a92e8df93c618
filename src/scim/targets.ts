/**
 * SCIM push targets: an app's SCIM endpoint and the token it gave, optionally narrowed to the
 * members of some groups. Adding one, and `sync`, queue a message for every person and group the
 * target should hold or holds (deliveries/scim-push.ts makes each right there, found by externalId), so a
 * target that already holds some of them ends up right, never with duplicates.
 */
import { randomUUID } from 'node:crypto';
import { iso } from '../clock';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import net from 'node:net';
import { checkTargetUrl, parseWebhookUrl, shownUrl, targetPolicy } from '../runtime/targets';
import { refusedKind } from '../config/address-ranges';
import { resolveGateGroup } from '../groups/manage';
import { enqueue } from '../store/deliveries';
import { unlessManaged } from '../managed/managed-by';
import {
  findScimGroups,
  findScimTarget,
  findScimUsers,
  insertScimTarget,
  listScimTargets,
  pushedReferences,
  type GroupColumn,
  type Predicate,
  type ScimGroupRow,
  type ScimTargetRow,
  targetFigures,
  deleteScimTarget,
} from '../store/scim';
import { message, type PushMessage } from '../deliveries/scim-push';
import { scimName } from './names';

export interface NewScimTarget {
  url: string;
  token: string;
  /** Group names or ids; none: everyone. */
  groups?: readonly string[];
  name?: string;
}

export interface ScimTargetView {
  id: string;
  name: string;
  url: string;
  /** The groups whose members are pushed (names); empty: everyone. */
  groups: string[];
  created_at: string;
  /** What it holds from Gatehouse (people and groups pushed there). */
  users: number;
  group_count: number;
  pending: number;
  failed: number;
  last_error: string | null;
  last_delivered_at: string | null;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The target's own groups, read by id (a target names a few; reading every group to name them
 * does not scale). In id order, as before; one since deleted is left out.
 */
async function groupsById(s: Services, ids: readonly string[]): Promise<ScimGroupRow[]> {
  if (ids.length === 0) return [];
  const where: Predicate<GroupColumn> = { kind: 'or', parts: ids.map((id) => ({ kind: 'compare', column: 'id', op: 'eq', value: id })) };
  return (await findScimGroups(s.store.root, where, 0, ids.length, false)).rows;
}

async function view(s: Services, row: ScimTargetRow): Promise<ScimTargetView> {
  const f = await targetFigures(s.store.root, row.id);
  const ids = JSON.parse(row.groups) as string[];
  const names = (await groupsById(s, ids)).map((g) => g.name);
  return {
    id: row.reference_id,
    name: row.name,
    url: shownUrl(row.url),
    groups: names,
    created_at: iso(row.created_at),
    users: f.users,
    group_count: f.groups,
    pending: f.pending,
    failed: f.failed,
    last_error: f.lastError,
    last_delivered_at: iso(f.lastDeliveredAt),
  };
}

/**
 * How many people or groups a sync reads from the store at a time. An object so a test can lower
 * it and see a sync over several pages push everyone (test/scim/push-pages.test.ts).
 */
export const SYNC_PAGE = { size: 1000 };

/**
 * Queues a message for everyone and every group the target should hold or holds; returns how many.
 * Also run once a configuration file's apply has committed a target it added or changed.
 */
export async function queueSync(s: Services, target: ScimTargetRow): Promise<number> {
  const scope = JSON.parse(target.groups) as string[];
  const users = new Set<string>();
  const size = SYNC_PAGE.size;
  for (let offset = 0; ; offset += size) {
    const page = await findScimUsers(s.store.root, null, offset, size);
    for (const u of page.rows) if (scope.length === 0 || u.groups.some((g) => scope.includes(g.reference_id))) users.add(u.reference_id);
    if (page.rows.length < size) break;
  }
  for (const ref of await pushedReferences(s.store.root, target.id, 'User')) users.add(ref);
  const groups = new Set<string>();
  // Every group, page by page: no silent cap (a sync once stopped at the first 100,000 groups).
  for (let offset = 0; ; offset += size) {
    const page = await findScimGroups(s.store.root, null, offset, size, false);
    for (const g of page.rows) if (scope.length === 0 || scope.includes(g.reference_id)) groups.add(g.reference_id);
    if (page.rows.length < size) break;
  }
  for (const ref of await pushedReferences(s.store.root, target.id, 'Group')) groups.add(ref);
  // People first: a group names its members by the ids the target gave them.
  const messages = [
    ...[...users].map((id): PushMessage => ({ resource: 'User', id, sync: true })),
    ...[...groups].map((id): PushMessage => ({ resource: 'Group', id, sync: true })),
  ].map((m) => message(target, m));
  for (let i = 0; i < messages.length; i += 500) await enqueue(s.store.root, messages.slice(i, i + 500));
  s.sender.nudge();
  return messages.length;
}

/**
 * The target's token rides every request: over plain http only to an address inside the network
 * (one the operator allowed with {--webhook-allow-private}, written as an address, or a loopback name).
 */
export function assertTokenProtected(url: URL): void {
  if (url.protocol !== 'http:') return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const inside = net.isIP(host) ? refusedKind(host, targetPolicy([])) !== null : /^(?:[^.]+\.)*localhost\.?$/i.test(host);
  if (!inside)
    throw new AppError('invalid_input', "{--url} must be https: the target's token would cross the network in clear (http is for an address inside it)");
}

/** The token a target gave, trimmed: 1 to 4,096 characters, none a control character (it rides a header). */
export function parseTargetToken(raw: string): string {
  const token = raw.trim();
  if (token === '' || token.length > 4096 || CONTROL.test(token))
    throw new AppError('invalid_input', 'the token is 1 to 4,096 characters, no control characters');
  return token;
}

export async function addTarget(s: Services, actor: Actor, input: NewScimTarget): Promise<{ target: ScimTargetView; queued: number }> {
  requireAdministrator(actor, 'add SCIM push targets');
  const url = parseWebhookUrl(input.url);
  await checkTargetUrl(new URL(url), targetPolicy(s.config.webhookAllowPrivate), '{--url}');
  assertTokenProtected(new URL(url));
  const token = parseTargetToken(input.token);
  const name = scimName(input.name ?? new URL(url).hostname);
  const groups: string[] = [];
  for (const g of input.groups ?? []) {
    const group = await resolveGateGroup(s.store.root, g);
    if (!groups.includes(group.reference_id)) groups.push(group.reference_id);
  }
  // Names differing only in case are one name (a configuration file names targets so): refused, as an exact one is.
  const row = await unlessManaged(s.store, actor.via, 'scim_target', name, async (tx) => {
    if ((await listScimTargets(tx)).some((t) => t.name.toLowerCase() === name.toLowerCase())) return undefined;
    return insertScimTarget(tx, { reference_id: randomUUID(), name, url, token, groups: JSON.stringify(groups) });
  });
  if (!row) throw new AppError('conflict', `a SCIM push target named ${name} exists already (names differing only in case count as one)`);
  await s.audit.record('scim_target_added', actor, { account: null, scim_target: row.reference_id, name });
  const queued = await queueSync(s, row);
  return { target: await view(s, row), queued };
}

async function find(s: Services, nameOrId: string): Promise<ScimTargetRow> {
  const row = await findScimTarget(s.store.root, nameOrId);
  if (!row) throw new AppError('not_found', `no SCIM push target ${nameOrId.slice(0, 64)} (scim target list shows them)`);
  return row;
}

export async function listTargets(s: Services, actor: Actor): Promise<ScimTargetView[]> {
  requireAdministrator(actor, 'see SCIM push targets');
  return Promise.all((await listScimTargets(s.store.root)).map((r) => view(s, r)));
}

export async function showTarget(s: Services, actor: Actor, nameOrId: string): Promise<ScimTargetView> {
  requireAdministrator(actor, 'see SCIM push targets');
  return view(s, await find(s, nameOrId));
}

/** Stops pushing: its queued messages go; what it holds stays there (the app keeps its accounts). */
export async function removeTarget(s: Services, actor: Actor, nameOrId: string): Promise<ScimTargetView> {
  requireAdministrator(actor, 'remove SCIM push targets');
  const row = await find(s, nameOrId);
  const shown = await view(s, row);
  if (!(await unlessManaged(s.store, actor.via, 'scim_target', row.name, (tx) => deleteScimTarget(tx, row.id))))
    throw new AppError('not_found', `no SCIM push target ${nameOrId.slice(0, 64)}`);
  await s.audit.record('scim_target_removed', actor, { account: null, scim_target: row.reference_id, name: row.name });
  return shown;
}

export async function syncTarget(s: Services, actor: Actor, nameOrId: string): Promise<{ target: ScimTargetView; queued: number }> {
  requireAdministrator(actor, 'sync SCIM push targets');
  const row = await find(s, nameOrId);
  const queued = await queueSync(s, row);
  await s.audit.record('scim_target_synced', actor, { account: null, scim_target: row.reference_id, name: row.name });
  return { target: await view(s, row), queued };
}
