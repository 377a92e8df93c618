/**
 * SCIM 2.0 (RFC 7643/7644), Gatehouse as the service provider at /scim/v2: tokens managed by
 * administrators (the shell, the console), and what the HTTP front end runs for a provisioning
 * service holding a token. Every read is one filtered, paged statement.
 */
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { requireAdministrator } from '../access/caller';
import { findScimGroups, findScimUsers } from '../store/scim';
import { groupFilter, userFilter } from './filter';
import {
  groupResource,
  type Json,
  listResponse,
  MAX_COUNT,
  membersWanted,
  project,
  resourceTypes,
  schemas,
  serviceProviderConfig,
  userResource,
} from './resources';
import { addToken, checkToken, listTokens, revokeToken, type ScimTokenView } from './tokens';

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
  /** The presented bearer token, checked (401 otherwise). */
  authenticate(bearer: string | null): Promise<{ id: string; name: string }>;
  /** The discovery documents and resources; `base` is /scim/v2 on the public URL. */
  discovery(what: 'ServiceProviderConfig' | 'ResourceTypes' | 'Schemas', id?: string): Json;
  listUsers(q: ScimQuery): Promise<Json>;
  getUser(id: string, q: ScimQuery): Promise<Json>;
  listGroups(q: ScimQuery): Promise<Json>;
  getGroup(id: string, q: ScimQuery): Promise<Json>;
}

/** startIndex is 1-based (less counts as 1); count at most MAX_COUNT (more is capped, not refused). */
function page(q: ScimQuery): { startIndex: number; count: number } {
  const int = (v: string | undefined, fallback: number) => {
    if (v === undefined || v === '') return fallback;
    if (!/^-?\d{1,9}$/.test(v)) throw new AppError('invalid_input', `startIndex and count are integers, got ${v.slice(0, 20)}`, { reason: 'invalidValue' });
    return Number(v);
  };
  return { startIndex: Math.max(1, int(q.startIndex, 1)), count: Math.min(MAX_COUNT, Math.max(0, int(q.count, 100))) };
}

const notFound = (what: string, id: string) => new AppError('not_found', `no ${what} ${id.slice(0, 64)}`);

export function scimOperations(s: Services): ScimOperations {
  const base = () => `${s.config.publicUrl}/scim/v2`;
  return {
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
    authenticate: (bearer) => checkToken(s, bearer),
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
      const { rows } = await findScimUsers(s.store.root, { kind: 'compare', column: 'id', op: 'eq', value: id }, 0, 1);
      if (!rows[0]) throw notFound('User', id);
      return project(userResource(base(), rows[0]), q);
    },
    async listGroups(q) {
      const { startIndex, count } = page(q);
      const members = membersWanted(q);
      const { total, rows } = await findScimGroups(s.store.root, groupFilter(q.filter), startIndex - 1, count, members);
      return listResponse(
        rows.map((r) => project(groupResource(base(), r, members), q)),
        total,
        startIndex,
      );
    },
    async getGroup(id, q) {
      const members = membersWanted(q);
      const { rows } = await findScimGroups(s.store.root, { kind: 'compare', column: 'id', op: 'eq', value: id }, 0, 1, members);
      if (!rows[0]) throw notFound('Group', id);
      return project(groupResource(base(), rows[0], members), q);
    },
  };
}
