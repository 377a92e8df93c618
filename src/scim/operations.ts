/**
 * SCIM 2.0 (RFC 7643/7644), Gatehouse as the service provider at /scim/v2: tokens managed by
 * administrators (the shell, the console), and what the HTTP front end runs for a provisioning
 * service holding a token. Every read is one filtered, paged statement.
 */
import { AppError } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { OPERATOR } from '../permission/check';
import { requireAdministrator } from '../access/caller';
import { createAccount } from '../accounts/create';
import { auditProvisioned, auditRemoved, changeProvisionedIn, removeAccountIn } from '../accounts/provisioned';
import { auditGroupCreated, auditGroupDeleted, auditGroupRenamed, createGroupIn, deleteGroupIn, renameGroupIn, setGroupExternalIdIn } from '../groups/manage';
import { auditMembers, changeMembersIn } from '../groups/members';
import { auditNesting } from '../groups/nesting';
import type { Tx } from '../store/connection';
import type { GroupRow } from '../store/groups';
import { findAccountByReference, lockAccounts } from '../store/accounts';
import { writeIfVersion } from '../store/conditional';
import { classifyReferences, findScimGroups, findScimUsers, type ScimGroupRow, type ScimUserRow } from '../store/scim';
import { applyPatch, type GroupInput, parseGroup, parseUser } from './writes';
import { nestIn, type NestingDone } from './nesting';
import { searchQuery } from './search';
import { groupFilter, userFilter } from './filter';
import { groupResource, type Json, listResponse, MAX_COUNT, project, resourceTypes, schemas, serviceProviderConfig, userResource } from './resources';
import { addToken, checkToken, listTokens, revokeToken, type ScimTokenView } from './tokens';
import { addTarget, listTargets, type NewScimTarget, removeTarget, type ScimTargetView, showTarget, syncTarget } from './targets';

/** A list request's query, as the front end read it. */
export interface ScimQuery {
  filter?: string;
  startIndex?: string;
  count?: string;
  attributes?: string;
  excludedAttributes?: string;
}

export interface ScimOperations {
  addToken(actor: Actor, name: string): Promise<ScimTokenView & { token: string }>;
  listTokens(actor: Actor): Promise<ScimTokenView[]>;
  revokeToken(actor: Actor, nameOrId: string): Promise<ScimTokenView>;
  /**
   * The request's bearer token, checked (401 otherwise): the actor of its writes, the operator's
   * reach without administrators (they are out of SCIM's write reach), audited `via: scim` with
   * the token's name.
   */
  authenticate(caller: Caller): Promise<Actor>;
  /** The discovery documents and resources; `base` is /scim/v2 on the public URL. */
  discovery(what: 'ServiceProviderConfig' | 'ResourceTypes' | 'Schemas', id?: string): Json;
  listUsers(q: ScimQuery): Promise<Json>;
  getUser(id: string, q: ScimQuery): Promise<Json>;
  listGroups(q: ScimQuery): Promise<Json>;
  getGroup(id: string, q: ScimQuery): Promise<Json>;
  /** POST …/.search: a SearchRequest body, answered as the GET list it stands for. */
  search(kind: 'Users' | 'Groups' | 'all', body: Json): Promise<Json>;
  /** POST: the new resource (201). */
  createUser(actor: Actor, body: Json): Promise<Json>;
  /** PUT (`patch` false) or PATCH (`patch` true), after `If-Match`. */
  changeUser(actor: Actor, id: string, body: Json, how: { patch: boolean; ifMatch?: string }): Promise<Json>;
  deleteUser(actor: Actor, id: string, ifMatch?: string): Promise<void>;
  createGroup(actor: Actor, body: Json): Promise<Json>;
  changeGroup(actor: Actor, id: string, body: Json, how: { patch: boolean; ifMatch?: string }): Promise<Json>;
  deleteGroup(actor: Actor, id: string, ifMatch?: string): Promise<void>;
  /** Push targets (apps' SCIM endpoints): added (and synced at once), listed, removed, synced again. */
  addTarget(actor: Actor, input: NewScimTarget): Promise<{ target: ScimTargetView; queued: number }>;
  listTargets(actor: Actor): Promise<ScimTargetView[]>;
  showTarget(actor: Actor, nameOrId: string): Promise<ScimTargetView>;
  removeTarget(actor: Actor, nameOrId: string): Promise<ScimTargetView>;
  syncTarget(actor: Actor, nameOrId: string): Promise<{ target: ScimTargetView; queued: number }>;
}

/** startIndex is 1-based (less counts as 1); count at most MAX_COUNT (more is capped, not refused). */
function page(q: ScimQuery): { startIndex: number; count: number } {
  const int = (v: string | undefined, fallback: number) => {
    if (v === undefined || v === '') return fallback;
    if (!/^-?\d{1,9}$/.test(v)) throw new AppError('invalid_input', `startIndex and count are integers, got ${v.slice(0, 20)}`, { scimType: 'invalidValue' });
    return Number(v);
  };
  return { startIndex: Math.max(1, int(q.startIndex, 1)), count: Math.min(MAX_COUNT, Math.max(0, int(q.count, 100))) };
}

const notFound = (what: string, id: string) => new AppError('not_found', `no ${what} ${id.slice(0, 64)}`);

export function scimOperations(s: Services): ScimOperations {
  const base = () => `${s.config.publicUrl}/scim/v2`;
  const userRow = async (tx: Tx, id: string): Promise<ScimUserRow> => {
    const { rows } = await findScimUsers(tx, { kind: 'compare', column: 'id', op: 'eq', value: id.toLowerCase() }, 0, 1);
    if (!rows[0]) throw notFound('User', id);
    return rows[0];
  };
  const groupRow = async (tx: Tx, id: string): Promise<ScimGroupRow> => {
    const { rows } = await findScimGroups(tx, { kind: 'compare', column: 'id', op: 'eq', value: id.toLowerCase() }, 0, 1, true);
    if (!rows[0]) throw notFound('Group', id);
    return rows[0];
  };
  const user = async (tx: Tx, id: string) => userResource(base(), await userRow(tx, id));
  const group = async (tx: Tx, id: string) => groupResource(base(), await groupRow(tx, id));
  const versionOf = (resource: Json) => String((resource.meta as Json).version);
  /**
   * The members split into people and groups by what the store holds (checked before anything is
   * written): an id that is neither a User nor a SCIM Group is refused, and so is one whose `$ref`
   * names the other type. A member's `type` label plays no part (scim/writes.ts).
   */
  const resolveMembers = async (tx: Tx, input: GroupInput): Promise<{ people: string[]; groups: string[] }> => {
    const out = { people: [] as string[], groups: [] as string[] };
    if (input.members.length === 0) return out;
    const { people, groups } = await classifyReferences(
      tx,
      input.members.map((m) => m.id),
    );
    const refused = (message: string) => new AppError('invalid_input', `members: ${message}`, { scimType: 'invalidValue' });
    for (const m of input.members) {
      const kinds = (['User', 'Group'] as const).filter((k) => (k === 'User' ? people : groups).has(m.id));
      const kind = m.ref ?? kinds[0];
      if (kind === undefined) throw refused(`no User or Group ${m.id}`);
      if (!kinds.includes(kind)) throw refused(kinds.length === 0 ? `no ${kind} ${m.id}` : `${m.id} is a ${kinds[0]}, but its $ref names a ${kind}`);
      (kind === 'User' ? out.people : out.groups).push(m.id);
    }
    return out;
  };
  /**
   * POST /.search: Users, then Groups, paged as one list. A filter naming an attribute one type
   * does not have finds nothing of that type (RFC 7644 section 3.4.2.2); naming one that neither
   * has is refused.
   */
  const searchAll = async (q: ScimQuery): Promise<Json> => {
    const { startIndex, count } = page(q);
    const filters = [userFilter, groupFilter].map((make) => {
      try {
        return { ok: true as const, where: make(q.filter) };
      } catch (err) {
        if ((err as AppError).scimType === 'invalidPath') return { ok: false as const, err };
        throw err;
      }
    });
    if (!filters[0].ok && !filters[1].ok) throw filters[0].err;
    const none = { total: 0, rows: [] };
    const users = filters[0].ok ? await findScimUsers(s.store.root, filters[0].where as Parameters<typeof findScimUsers>[1], startIndex - 1, count) : none;
    const taken = users.rows.length;
    const groupOffset = Math.max(0, startIndex - 1 - users.total);
    const groups = filters[1].ok
      ? await findScimGroups(s.store.root, filters[1].where as Parameters<typeof findScimGroups>[1], groupOffset, count - taken)
      : none;
    const resources = [
      ...users.rows.map((r) => project(userResource(base(), r as ScimUserRow), q)),
      ...groups.rows.map((r) => project(groupResource(base(), r as ScimGroupRow), q)),
    ];
    return listResponse(resources, users.total + groups.total, startIndex);
  };
  const auditNestingDone = async (actor: Actor, done: NestingDone | undefined, renamed?: GroupRow) => {
    if (done) await auditNesting(s, actor, renamed ?? done.group, done.changed, done.change);
  };
  const ops: ScimOperations = {
    async addToken(actor, name) {
      requireAdministrator(actor, 'make SCIM tokens');
      return addToken(s, actor, name);
    },
    async listTokens(actor) {
      requireAdministrator(actor, 'list SCIM tokens');
      return listTokens(s);
    },
    async revokeToken(actor, nameOrId) {
      requireAdministrator(actor, 'revoke SCIM tokens');
      return revokeToken(s, actor, nameOrId);
    },
    async authenticate(caller) {
      const token = await checkToken(s, caller.token);
      return { principal: OPERATOR, via: 'scim', client: caller.client, userAgent: caller.userAgent, session: null, scimToken: token.name };
    },
    discovery(what, id) {
      if (what === 'ServiceProviderConfig') return serviceProviderConfig(base(), `${s.config.publicUrl}/openapi.json`);
      const all = what === 'ResourceTypes' ? resourceTypes(base()) : schemas(base());
      if (id === undefined) return listResponse(all, all.length, 1);
      const one = all.find((r) => r.id === id);
      if (!one) throw notFound(what === 'ResourceTypes' ? 'resource type' : 'schema', id);
      return one;
    },
    async listUsers(q) {
      const { startIndex, count } = page(q);
      const { total, rows } = await findScimUsers(s.store.root, userFilter(q.filter), startIndex - 1, count);
      return listResponse(
        rows.map((r) => project(userResource(base(), r), q)),
        total,
        startIndex,
      );
    },
    async getUser(id, q) {
      return project(await user(s.store.root, id), q);
    },
    async listGroups(q) {
      const { startIndex, count } = page(q);
      // Members are read even when not answered: the version is a digest of the whole resource.
      const { total, rows } = await findScimGroups(s.store.root, groupFilter(q.filter), startIndex - 1, count);
      return listResponse(
        rows.map((r) => project(groupResource(base(), r), q)),
        total,
        startIndex,
      );
    },
    async getGroup(id, q) {
      return project(await group(s.store.root, id), q);
    },
    async search(kind, body) {
      const q = searchQuery(body);
      if (kind !== 'all') return kind === 'Users' ? ops.listUsers(q) : ops.listGroups(q);
      return searchAll(q);
    },
    async createUser(actor, body) {
      requireAdministrator(actor, 'provision accounts');
      const input = parseUser(body);
      const created = await createAccount(
        s,
        actor,
        {
          email: input.email.email,
          emailKey: input.email.key,
          name: input.name,
          username: input.username,
          // Contract section 19: no password; an upstream provider, a passkey or the reset mail.
          password: null,
          externalId: input.externalId,
          disabled: !input.active,
        },
        undefined,
        { way: 'scim' },
      );
      return user(s.store.root, created.referenceId);
    },
    // Writes: the version If-Match names is checked in the write's transaction, under the lock
    // every account and membership change takes, on the resource read in it; a PATCH applies to
    // that resource, so a concurrent change is never lost. Audited once committed.
    async changeUser(actor, id, body, how) {
      requireAdministrator(actor, 'provision accounts');
      const done = await writeIfVersion(s.store, {
        lock: lockAccounts,
        read: (tx) => userRow(tx, id),
        version: (current) => versionOf(userResource(base(), current)),
        ifMatch: how.ifMatch,
        write: async (tx, current) => {
          const input = how.patch ? parseUser(applyPatch(userResource(base(), current), body, 'User'), current.name) : parseUser(body);
          const found = await findAccountByReference(tx, current.reference_id);
          if (!found) throw notFound('User', id);
          const { account, events } = await changeProvisionedIn(s.messages, tx, actor, found, {
            username: input.username,
            email: input.email,
            name: input.name,
            externalId: input.externalId,
            active: input.active,
          });
          return { account, events, resource: await user(tx, current.reference_id) };
        },
      });
      await auditProvisioned(s, actor, done.account, done.events);
      return done.resource;
    },
    async deleteUser(actor, id, ifMatch) {
      requireAdministrator(actor, 'provision accounts');
      const about = await writeIfVersion(s.store, {
        lock: lockAccounts,
        read: (tx) => userRow(tx, id),
        version: (current) => versionOf(userResource(base(), current)),
        ifMatch,
        write: async (tx, current) => {
          const found = await findAccountByReference(tx, current.reference_id);
          if (!found) throw notFound('User', id);
          return removeAccountIn(tx, actor, found);
        },
      });
      await auditRemoved(s, actor, about);
    },
    async createGroup(actor, body) {
      requireAdministrator(actor, 'provision groups');
      const input = parseGroup(body);
      // The group and its members (people and groups) in one transaction: no group is left without the members asked for.
      const done = await s.store.transaction(async (tx) => {
        await lockAccounts(tx);
        const members = await resolveMembers(tx, input);
        const created = await createGroupIn(tx, actor, { name: input.name, ownerId: null, externalId: input.externalId });
        const added = members.people.length > 0 ? await changeMembersIn(tx, actor, created.reference_id, members.people, 'add') : undefined;
        const nested = await nestIn(tx, actor, created.reference_id, members.groups, 'add');
        return { created, added, nested, resource: await group(tx, created.reference_id) };
      });
      await auditGroupCreated(s, actor, done.created);
      if (done.added) await auditMembers(s, actor, done.added.group, done.added.changed, 'add');
      await auditNestingDone(actor, done.nested);
      return done.resource;
    },
    async changeGroup(actor, id, body, how) {
      requireAdministrator(actor, 'provision groups');
      // Rename, externalId, adds and removes of people and groups: one transaction, so a refusal halfway changes nothing.
      const done = await writeIfVersion(s.store, {
        lock: lockAccounts,
        read: (tx) => groupRow(tx, id),
        version: (current) => versionOf(groupResource(base(), current)),
        ifMatch: how.ifMatch,
        write: async (tx, current) => {
          const ref = current.reference_id;
          const input = parseGroup(how.patch ? applyPatch(groupResource(base(), current), body, 'Group') : body);
          const members = await resolveMembers(tx, input);
          const diff = (before: readonly string[], after: readonly string[]) => {
            const [was, is] = [new Set(before), new Set(after)];
            return { added: after.filter((m) => !was.has(m)), removed: before.filter((m) => !is.has(m)) };
          };
          const people = diff(
            current.members.map(([member]) => member),
            members.people,
          );
          const groups = diff(
            current.memberGroups.map(([member]) => member),
            members.groups,
          );
          // Groups first: a cycle refused names the group as it is, not as the same write would rename it.
          const unnested = await nestIn(tx, actor, ref, groups.removed, 'remove');
          const nested = await nestIn(tx, actor, ref, groups.added, 'add');
          const renamed = input.name !== current.name ? await renameGroupIn(tx, actor, ref, input.name) : undefined;
          if (input.externalId !== current.external_id) await setGroupExternalIdIn(tx, actor, ref, input.externalId);
          const adds = people.added.length > 0 ? await changeMembersIn(tx, actor, ref, people.added, 'add') : undefined;
          const removes = people.removed.length > 0 ? await changeMembersIn(tx, actor, ref, people.removed, 'remove') : undefined;
          return { renamed, adds, removes, unnested, nested, resource: await group(tx, ref) };
        },
      });
      if (done.renamed?.changed) await auditGroupRenamed(s, actor, done.renamed.group);
      if (done.adds) await auditMembers(s, actor, done.adds.group, done.adds.changed, 'add');
      if (done.removes) await auditMembers(s, actor, done.removes.group, done.removes.changed, 'remove');
      // Under the group's name as the write left it, as the people's rows are.
      await auditNestingDone(actor, done.unnested, done.renamed?.group);
      await auditNestingDone(actor, done.nested, done.renamed?.group);
      return done.resource;
    },
    async deleteGroup(actor, id, ifMatch) {
      requireAdministrator(actor, 'provision groups');
      const gone = await writeIfVersion(s.store, {
        lock: lockAccounts,
        read: (tx) => groupRow(tx, id),
        version: (current) => versionOf(groupResource(base(), current)),
        ifMatch,
        write: (tx, current) => deleteGroupIn(tx, current.reference_id, 'scim'),
      });
      await auditGroupDeleted(s, actor, gone);
    },
    addTarget: (actor, input) => addTarget(s, actor, input),
    listTargets: (actor) => listTargets(s, actor),
    showTarget: (actor, nameOrId) => showTarget(s, actor, nameOrId),
    removeTarget: (actor, nameOrId) => removeTarget(s, actor, nameOrId),
    syncTarget: (actor, nameOrId) => syncTarget(s, actor, nameOrId),
  };
  return ops;
}
