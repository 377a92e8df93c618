/**
 * How accounts and managed groups read as SCIM resources (RFC 7643), the discovery documents,
 * and `attributes`/`excludedAttributes`. A resource's version (its weak ETag) is a digest of the
 * whole resource, whatever a request's attributes leave out of the answer: any write that changes
 * it changes the version, and a version read with `excludedAttributes=members` is the one a write
 * checks.
 */
import { createHash } from 'node:crypto';
import { iso } from '../clock';
import type { ScimGroupRow, ScimUserRow } from '../store/scim';

export const SCHEMAS = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  enterprise: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  config: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

export type Json = Record<string, unknown>;

const version = (body: Json) => `W/"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 22)}"`;

/** A person as a SCIM User. */
export function userResource(base: string, u: ScimUserRow): Json {
  const body: Json = {
    schemas: [SCHEMAS.user],
    id: u.reference_id,
    ...(u.external_id === null ? {} : { externalId: u.external_id }),
    userName: u.username,
    name: { formatted: u.name },
    displayName: u.name,
    // One address, the account's: `primary` picks it from what a service sends and is not answered.
    emails: [{ value: u.email, type: 'work' }],
    active: !u.disabled,
    // Only groups that are SCIM Group resources (not the built-in ones): every $ref answers. Every
    // group the person is in, `indirect` when only through a group inside it (RFC 7643 section 4.1.2).
    groups: u.groups
      .filter((g) => !g.builtIn)
      .map((g) => ({ value: g.reference_id, display: g.name, $ref: `${base}/Groups/${g.reference_id}`, type: g.direct ? 'direct' : 'indirect' })),
  };
  return {
    ...body,
    meta: {
      resourceType: 'User',
      created: iso(u.created_at),
      lastModified: iso(u.updated_at),
      location: `${base}/Users/${u.reference_id}`,
      version: version(body),
    },
  };
}

/** A managed group as a SCIM Group: its members are people and the groups directly inside it. */
export function groupResource(base: string, g: ScimGroupRow): Json {
  const members = [
    // No display for a person: a member is written as {value}, and answered as it is written.
    ...g.members.map(([id]) => ({ value: id, $ref: `${base}/Users/${id}`, type: 'User' })),
    ...g.memberGroups.map(([id, name]) => ({ value: id, display: name, $ref: `${base}/Groups/${id}`, type: 'Group' })),
  ];
  const body: Json = {
    schemas: [SCHEMAS.group],
    id: g.reference_id,
    ...(g.external_id === null ? {} : { externalId: g.external_id }),
    displayName: g.name,
    // An empty list is left out.
    ...(members.length > 0 ? { members } : {}),
  };
  return {
    ...body,
    meta: {
      resourceType: 'Group',
      created: iso(g.created_at),
      lastModified: iso(g.updated_at),
      location: `${base}/Groups/${g.reference_id}`,
      version: version(body),
    },
  };
}

/** Attributes every answer carries whatever `attributes` asks (RFC 7643 "returned: always"). */
const ALWAYS = new Set(['id', 'schemas']);

const paths = (list: string | undefined): string[] =>
  (list ?? '')
    .split(',')
    .map((p) =>
      p
        .trim()
        .replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i, '')
        .toLowerCase(),
    )
    .filter(Boolean);

function pick(resource: Json, wanted: string[]): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(resource)) {
    const k = key.toLowerCase();
    if (ALWAYS.has(key) || wanted.includes(k)) {
      out[key] = value;
      continue;
    }
    const subs = wanted.filter((w) => w.startsWith(`${k}.`)).map((w) => w.slice(k.length + 1));
    if (subs.length === 0) continue;
    if (Array.isArray(value)) out[key] = value.map((v) => pick(v as Json, subs));
    else if (value && typeof value === 'object') out[key] = pick(value as Json, subs);
  }
  return out;
}

function drop(resource: Json, unwanted: string[]): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(resource)) {
    const k = key.toLowerCase();
    if (!ALWAYS.has(key) && unwanted.includes(k)) continue;
    const subs = unwanted.filter((w) => w.startsWith(`${k}.`)).map((w) => w.slice(k.length + 1));
    if (subs.length > 0 && Array.isArray(value)) out[key] = value.map((v) => drop(v as Json, subs));
    else if (subs.length > 0 && value && typeof value === 'object') out[key] = drop(value as Json, subs);
    else out[key] = value;
  }
  return out;
}

/** The resource as `attributes` (only these) or `excludedAttributes` (all but these) ask for it. */
export function project(resource: Json, q: { attributes?: string; excludedAttributes?: string }): Json {
  const wanted = paths(q.attributes);
  if (wanted.length > 0) return pick(resource, wanted);
  const unwanted = paths(q.excludedAttributes);
  return unwanted.length > 0 ? drop(resource, unwanted) : resource;
}

export function listResponse(resources: Json[], total: number, startIndex: number): Json {
  return { schemas: [SCHEMAS.list], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

/** The most a page holds: a larger count is capped, not refused. */
export const MAX_COUNT = 200;

export function serviceProviderConfig(base: string, docs: string): Json {
  return {
    schemas: [SCHEMAS.config],
    documentationUri: docs,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'SCIM token',
        description: 'A token made with gatehouse scim token add, sent as Authorization: Bearer',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string): Json[] {
  return [
    {
      schemas: [SCHEMAS.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A Gatehouse account',
      schema: SCHEMAS.user,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [SCHEMAS.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: 'A managed group of Gatehouse accounts',
      schema: SCHEMAS.group,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

const attr = (name: string, o: Json = {}): Json => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...o,
});

/** The schemas of what Gatehouse keeps (RFC 7643 section 7): the attributes it reads and answers. */
export function schemas(base: string): Json[] {
  const user = {
    schemas: [SCHEMAS.schema],
    id: SCHEMAS.user,
    name: 'User',
    description: 'A Gatehouse account',
    attributes: [
      attr('userName', { required: true, uniqueness: 'server' }),
      attr('externalId', { caseExact: true }),
      // name, displayName and active: every account has them; a body without them gets the defaults
      // (the userName's part before any @; active), and a PATCH that removes them keeps them.
      attr('name', { type: 'complex', required: true, subAttributes: [attr('formatted')] }),
      attr('displayName', { required: true }),
      // Required: every account has an email (or an email-shaped userName stands for it).
      attr('emails', {
        type: 'complex',
        multiValued: true,
        required: true,
        subAttributes: [
          attr('value', { required: true }),
          attr('type', { canonicalValues: ['work'] }),
          attr('primary', { type: 'boolean', mutability: 'readOnly', returned: 'never' }),
        ],
      }),
      attr('active', { type: 'boolean', required: true }),
      attr('groups', {
        type: 'complex',
        multiValued: true,
        mutability: 'readOnly',
        subAttributes: [
          attr('value', { mutability: 'readOnly' }),
          attr('display', { mutability: 'readOnly' }),
          attr('$ref', { type: 'reference', mutability: 'readOnly', referenceTypes: ['Group'] }),
          attr('type', { mutability: 'readOnly', canonicalValues: ['direct', 'indirect'] }),
        ],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMAS.user}` },
  };
  const group = {
    schemas: [SCHEMAS.schema],
    id: SCHEMAS.group,
    name: 'Group',
    description: 'A managed group of Gatehouse accounts and groups',
    attributes: [
      attr('displayName', { required: true, uniqueness: 'server' }),
      attr('externalId', { caseExact: true }),
      attr('members', {
        type: 'complex',
        multiValued: true,
        subAttributes: [
          attr('value', { mutability: 'immutable' }),
          attr('display', { mutability: 'readOnly' }),
          attr('$ref', { type: 'reference', mutability: 'immutable', referenceTypes: ['User', 'Group'] }),
          attr('type', { mutability: 'immutable', canonicalValues: ['User', 'Group'] }),
        ],
      }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMAS.group}` },
  };
  return [user, group];
}
