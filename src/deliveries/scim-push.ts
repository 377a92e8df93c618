/**
 * Pushing people and groups to apps' SCIM endpoints (contract section 19, outbound; the targets
 * themselves are managed in scim/targets.ts). A change
 * Gatehouse audits becomes, for each push target, a message on the one delivery queue naming
 * what changed (a person or a group, by reference id): never a copy of it. When the message is
 * sent, the person or group is read as it is then and made so on the target, found there by the
 * id the target gave it or by `externalId` = Gatehouse's reference id, so a message sent late or
 * twice does no harm and a target that was down catches up with the state, not a replay.
 *   - in scope (everyone, or a member of the target's groups): created (POST) or replaced (PUT),
 *     `active:false` while disabled;
 *   - out of scope or deleted: deleted there (DELETE).
 * Groups pushed: the target's groups, or every managed group when it has none.
 *
 * Nested groups are pushed flattened: a group's members there are every person in it directly or
 * through a group inside it (those the target holds), never a member of type Group. Membership is
 * transitive for every decision Gatehouse makes, and many targets keep no nesting (some refuse a
 * Group member, which would hold the group's message retrying; some ignore it, which would leave
 * the inner group's people out of the app). A flat list means the same on every target. So a
 * change below a group (a person in, a group nested) is a change of every group above it, and for
 * a target scoped to groups, nesting moves the inner group's people in or out of its scope.
 */
import type { AuditEvent } from '../audit-events';
import type { Store, Tx } from '../store/connection';
import type { NewDelivery } from '../store/deliveries';
import type { ScimRequest } from '../runtime/sender';
import {
  findScimGroups,
  findScimUsers,
  groupsAbove,
  listScimTargets,
  peopleBelow,
  pushedIds,
  type ScimGroupRow,
  type ScimTargetRow,
  type ScimUserRow,
  setPushed,
} from '../store/scim';

/** The core SCIM schemas a pushed resource names (RFC 7643). */
const SCHEMAS = { user: 'urn:ietf:params:scim:schemas:core:2.0:User', group: 'urn:ietf:params:scim:schemas:core:2.0:Group' } as const;

/** A message's payload: what to make right on the target. `sync`: look it up there even if never pushed. */
export interface PushMessage {
  resource: 'User' | 'Group';
  id: string;
  sync?: boolean;
}

/** The audited events that change what a target holds, and what each names. */
const USER_EVENTS: ReadonlySet<AuditEvent> = new Set([
  'signup',
  // An imported person is pushed as one who signed up (the import's group_member_added follow).
  'account_imported',
  'email_changed',
  'name_changed',
  'username_changed',
  'account_disabled',
  'account_enabled',
  'account_deleted',
  'group_member_added',
  'group_member_removed',
]);
const GROUP_EVENTS: ReadonlySet<AuditEvent> = new Set([
  'group_created',
  'group_renamed',
  'group_deleted',
  'group_member_added',
  'group_member_removed',
  'group_nested',
  'group_unnested',
]);
/** Events that change who is in a group through nesting: the groups above it change too, and the inner group's people may enter or leave a target's scope. */
const NESTING_EVENTS: ReadonlySet<AuditEvent> = new Set(['group_nested', 'group_unnested']);
/** Events that change a group's people: every group above it, whose flattened members they are, is pushed again. */
const MEMBER_EVENTS: ReadonlySet<AuditEvent> = new Set(['group_member_added', 'group_member_removed', 'group_nested', 'group_unnested']);

/**
 * The reads the push messages of events take, each made once however many events ask (the
 * audit of a batch: Audit.recordAll). Events of one batch are audited after its writes, so the
 * answers are the same for each of them.
 */
export interface PushReads {
  targets(): Promise<ScimTargetRow[]>;
  groupsAbove(group: string): Promise<string[]>;
  peopleBelow(group: string): Promise<string[]>;
}

export function pushReads(on: Tx): PushReads {
  let targets: Promise<ScimTargetRow[]> | undefined;
  const above = new Map<string, Promise<string[]>>();
  const below = new Map<string, Promise<string[]>>();
  const once = (m: Map<string, Promise<string[]>>, key: string, read: () => Promise<string[]>) => {
    let p = m.get(key);
    if (!p) m.set(key, (p = read()));
    return p;
  };
  return {
    targets: () => (targets ??= listScimTargets(on)),
    groupsAbove: (group) => once(above, group, () => groupsAbove(on, group)),
    peopleBelow: (group) => once(below, group, () => peopleBelow(on, group)),
  };
}

/**
 * The push messages an audited event makes: one per target it can concern (none without targets:
 * one indexed read). A few fixed reads for nesting, whatever the depth (the store keeps the closure).
 */
export async function pushMessages(reads: PushReads, event: AuditEvent, fields: Readonly<Record<string, unknown>>): Promise<NewDelivery[]> {
  const user = USER_EVENTS.has(event) && typeof fields.account === 'string' ? fields.account : null;
  const group = GROUP_EVENTS.has(event) && typeof fields.group === 'string' ? fields.group : null;
  if (user === null && group === null) return [];
  const targets = await reads.targets();
  if (targets.length === 0) return [];
  // The group and every group above it: their flattened members are what changed.
  const groups = group === null ? [] : MEMBER_EVENTS.has(event) ? [group, ...(await reads.groupsAbove(group))] : [group];
  const inner = NESTING_EVENTS.has(event) && typeof fields.member_group === 'string' ? fields.member_group : null;
  const scoped = targets.some((t) => (JSON.parse(t.groups) as string[]).length > 0);
  // Only a target scoped to groups can see the inner group's people come or go.
  const people = inner !== null && scoped ? await reads.peopleBelow(inner) : [];
  const out: NewDelivery[] = [];
  for (const target of targets) {
    const scope = JSON.parse(target.groups) as string[];
    // People first (a group's member must exist there before the group names it).
    if (user !== null) out.push(message(target, { resource: 'User', id: user }));
    if (scope.length > 0) for (const id of people) out.push(message(target, { resource: 'User', id }));
    for (const id of groups) if (scope.length === 0 || scope.includes(id)) out.push(message(target, { resource: 'Group', id }));
  }
  return out;
}

export const message = (target: Pick<ScimTargetRow, 'id'>, m: PushMessage): NewDelivery => ({
  kind: 'scim',
  scim_target_id: target.id,
  topic: `${m.resource.toLowerCase()}.sync`,
  payload: JSON.stringify(m),
});

/** One request to a target: its status and JSON body (null when there is none). */

/** A target's answer that is not what was asked: retried later (the message stays in the queue). */
class PushFailed extends Error {}

const expect = (r: { status: number }, what: string, ok: number[]) => {
  if (!ok.includes(r.status)) throw new PushFailed(`${what}: HTTP ${r.status}`);
};

/**
 * The id a target gave a resource. One that cannot name a resource in a URL (`.` and `..` are
 * path segments even encoded: `/Users/..` is the target's base) is the target's error: the push
 * fails and is retried, and nothing is ever sent to such a path.
 */
/** The path of one resource at the target; an id that is a dot segment (stored before it was refused) is refused here too. */
const resourcePath = (endpoint: string, remote: string) => {
  if (remote === '.' || remote === '..') throw new PushFailed(`the target's id ${JSON.stringify(remote)} names no resource`);
  return `${endpoint}/${encodeURIComponent(remote)}`;
};

const idOf = (body: unknown): string | null => {
  const id = (body as { id?: unknown } | null)?.id;
  if (typeof id !== 'string' || id === '') return null;
  if (id === '.' || id === '..') throw new PushFailed(`the target answered the id ${JSON.stringify(id)}, which names no resource`);
  return id;
};

function userBody(u: ScimUserRow): Record<string, unknown> {
  return {
    schemas: [SCHEMAS.user],
    externalId: u.reference_id,
    userName: u.username,
    name: { formatted: u.name },
    displayName: u.name,
    emails: [{ value: u.email, type: 'work', primary: true }],
    active: !u.disabled,
  };
}

/**
 * A path under the target's base URL (`/Users`, `/Groups/<id>?…`): appended to the base's path, so
 * a base with a query (`https://app.example/scim/v2?tenant=t1`) keeps it after the path, and the
 * path's own query joins it.
 */
export function endpointUrl(base: string, path: string): URL {
  const url = new URL(base);
  const cut = path.indexOf('?');
  const [pathname, query] = cut < 0 ? [path, ''] : [path.slice(0, cut), path.slice(cut + 1)];
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${pathname}`;
  url.search = [url.search.slice(1), query].filter(Boolean).join('&');
  url.hash = '';
  return url;
}

/** Makes one message's person or group right on its target. */
export async function push(store: Store, target: ScimTargetRow, payload: unknown, request: ScimRequest): Promise<void> {
  const m = payload as PushMessage;
  const at = (path: string) => endpointUrl(target.url, path);
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) => request(method, at(path), target.token, body);
  const scope = JSON.parse(target.groups) as string[];
  const endpoint = m.resource === 'User' ? '/Users' : '/Groups';

  /** The target's id for it: the one it gave when pushed, else found by externalId (or `unique` when asked). */
  const remoteId = async (unique?: string): Promise<string | null> => {
    const known = (await pushedIds(store.root, target.id, [m.id])).get(m.id);
    if (known) return known;
    if (!m.sync && unique === undefined) return null;
    const filter = unique ?? `externalId eq "${m.id}"`;
    const found = await call('GET', `${endpoint}?filter=${encodeURIComponent(filter)}&count=2`);
    expect(found, `looking up ${m.resource} ${m.id}`, [200]);
    const list = (found.body as { Resources?: unknown[] } | null)?.Resources ?? [];
    return list.length === 1 ? idOf(list[0]) : null;
  };

  let body: Record<string, unknown> | null = null;
  if (m.resource === 'User') {
    const u: ScimUserRow | undefined = (await findScimUsers(store.root, { kind: 'compare', column: 'id', op: 'eq', value: m.id }, 0, 1)).rows[0];
    if (u && (scope.length === 0 || u.groups.some((g) => scope.includes(g.reference_id)))) body = userBody(u);
  } else {
    const g: ScimGroupRow | undefined = (await findScimGroups(store.root, { kind: 'compare', column: 'id', op: 'eq', value: m.id }, 0, 1, false)).rows[0];
    if (g && (scope.length === 0 || scope.includes(g.reference_id))) {
      // Flattened: everyone in it directly or through a group inside it, as the target knows them.
      const people = await peopleBelow(store.root, g.reference_id);
      const ids = await pushedIds(store.root, target.id, people);
      body = {
        schemas: [SCHEMAS.group],
        externalId: g.reference_id,
        displayName: g.name,
        members: people.flatMap((member) => (ids.has(member) ? [{ value: ids.get(member) }] : [])),
      };
    }
  }

  let remote = await remoteId();
  if (body === null) {
    // Out of scope, or gone from Gatehouse: gone from the target too.
    if (remote !== null) expect(await call('DELETE', resourcePath(endpoint, remote)), `deleting ${m.resource} ${m.id}`, [200, 204, 404]);
    await setPushed(store.root, target.id, m.resource, m.id, null);
    return;
  }
  if (remote !== null) {
    const put = await call('PUT', resourcePath(endpoint, remote), { ...body, id: remote });
    if (put.status === 404) remote = null;
    else expect(put, `replacing ${m.resource} ${m.id}`, [200, 204]);
  }
  if (remote === null) {
    const made = await call('POST', endpoint, body);
    if (made.status === 409) {
      // The target holds it already without our externalId (made by hand): adopt it.
      const unique = m.resource === 'User' ? `userName eq "${String(body.userName)}"` : `displayName eq "${String(body.displayName).replace(/"/g, '\\"')}"`;
      remote = await remoteId(unique);
      if (remote === null) throw new PushFailed(`creating ${m.resource} ${m.id}: HTTP 409, and no ${m.resource} found by ${unique}`);
      expect(await call('PUT', resourcePath(endpoint, remote), { ...body, id: remote }), `replacing ${m.resource} ${m.id}`, [200, 204]);
    } else {
      expect(made, `creating ${m.resource} ${m.id}`, [200, 201]);
      remote = idOf(made.body);
      if (remote === null) throw new PushFailed(`creating ${m.resource} ${m.id}: the answer has no id`);
    }
  }
  await setPushed(store.root, target.id, m.resource, m.id, remote);
}
