/**
 * GET /openapi.json: an OpenAPI 3.1 description built from the definitions the handlers use:
 * each action's declared attributes (checked by the registry before it runs), each record type's
 * serialized columns with their store types, its filter and sort columns, its writable and
 * creatable attributes, and the error catalogue with its statuses. Nothing here is written twice.
 */
import { PAGE_SIZE, type ApiCatalog } from '../core';
import { ERROR_CODES, REASONS } from '../errors';
import { STATUS } from './errors';
import { JSONAPI } from './jsonapi';

import { forwardAuthPaths, json, optionalBearer, type Schema, scimPaths } from './openapi-parts';

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const COLUMN: Record<string, Schema> = {
  int: { type: 'integer' },
  bool: { type: 'boolean' },
  text: { type: ['string', 'null'] },
  time: { type: 'string', format: 'date-time' },
};
const bearer = [{ bearer: [] }];

/** The statuses an operation can answer with an error, from the catalogue (4xx and 5xx). */
function errorResponses(schema: Schema, type: string, codes: readonly (typeof ERROR_CODES)[number][]) {
  const out: Record<string, unknown> = {};
  for (const code of codes) {
    const status = String(STATUS[code]);
    out[status] ??= { description: `error (${codes.filter((c) => String(STATUS[c]) === status).join(', ')})`, ...json(schema, type) };
  }
  return out;
}

export function openApiDocument(catalog: ApiCatalog, publicUrl: string): Schema {
  const schemas: Record<string, Schema> = {
    ActionItem: {
      type: 'object',
      required: ['ResponseType', 'Attributes'],
      properties: { ResponseType: { type: 'string' }, Attributes: { type: 'object' } },
      additionalProperties: false,
    },
    ActionAnswer: { type: 'array', items: ref('ActionItem'), description: 'client.notify, client.store.set (token, refresh_token), and action-specific items' },
    ActionError: {
      type: 'array',
      minItems: 1,
      maxItems: 1,
      items: {
        type: 'object',
        required: ['ResponseType', 'Attributes'],
        properties: {
          ResponseType: { const: 'client.notify' },
          Attributes: {
            type: 'object',
            required: ['type', 'title', 'message', 'code'],
            properties: { type: { const: 'error' }, title: { const: 'failed' }, message: { type: 'string' }, code: ref('ErrorCode'), reason: ref('Reason') },
            additionalProperties: false,
          },
        },
      },
    },
    ErrorCode: { type: 'string', enum: [...ERROR_CODES] },
    Reason: {
      type: 'string',
      enum: Object.keys(REASONS),
      description: 'which rule refused (docs/http-api.md lists them); on every forbidden, and on the codes that are one rule each',
    },
    Errors: {
      type: 'object',
      required: ['errors'],
      properties: {
        errors: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['status', 'code', 'title'],
            properties: { status: { type: 'string', pattern: '^[45][0-9]{2}$' }, code: ref('ErrorCode'), reason: ref('Reason'), title: { type: 'string' } },
            additionalProperties: false,
          },
        },
      },
      additionalProperties: false,
    },
    Linkage: {
      type: 'object',
      required: ['links', 'data'],
      properties: {
        links: { type: 'object', required: ['self'], properties: { self: { type: 'string', format: 'uri' } } },
        data: {
          type: 'array',
          items: { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string' }, id: { type: 'string' } }, additionalProperties: false },
        },
      },
      additionalProperties: false,
    },
    LinkageBody: {
      type: 'object',
      required: ['data'],
      properties: {
        data: { type: 'array', items: { type: 'object', required: ['type', 'id'], properties: { type: { type: 'string' }, id: { type: 'string' } } } },
      },
    },
    Jwks: {
      type: 'object',
      required: ['keys'],
      properties: {
        keys: {
          type: 'array',
          items: {
            type: 'object',
            required: ['kty', 'kid', 'alg', 'use'],
            properties: { kty: { type: 'string' }, kid: { type: 'string' }, alg: { type: 'string' }, use: { const: 'sig' } },
          },
        },
      },
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};

  paths['/ping'] = {
    get: {
      summary: 'liveness: the process answers (touches neither store nor auth)',
      responses: { 200: { description: 'pong', ...json({ const: 'pong' }, 'text/plain') } },
    },
  };
  paths['/health/ready'] = {
    get: {
      summary: 'readiness: the store answers a read within 1 s',
      responses: {
        200: {
          description: 'ready',
          ...json({ type: 'object', required: ['status'], properties: { status: { const: 'ready' } }, additionalProperties: false }),
        },
        503: {
          description: 'the store did not answer',
          ...json({ type: 'object', required: ['status'], properties: { status: { const: 'unavailable' } }, additionalProperties: false }),
        },
      },
    },
  };
  paths['/statistics'] = {
    get: {
      summary: 'figures for operators (administrators, or everyone where public statistics are on)',
      security: optionalBearer,
      responses: {
        200: {
          description: 'statistics',
          ...json({
            type: 'object',
            required: ['web', 'db', 'accounts', 'auth', 'process'],
            properties: {
              web: { type: 'object' },
              db: { type: 'object' },
              accounts: {
                type: 'object',
                required: ['total', 'by_origin'],
                properties: {
                  total: { type: 'integer' },
                  // People by where they came from: local (made here), or the import format that made them.
                  by_origin: { type: 'object', required: ['local'], additionalProperties: { type: 'integer', minimum: 0 } },
                },
              },
              auth: { type: 'object' },
              process: { type: 'object' },
            },
          }),
        },
        ...errorResponses(ref('Errors'), JSONAPI, ['unauthenticated', 'forbidden', 'invalid_token', 'unavailable']),
      },
    },
  };
  paths['/metrics'] = {
    get: {
      summary: 'Prometheus text format (administrators, the bearer of the metrics token, or everyone where public metrics are on)',
      security: optionalBearer,
      responses: {
        200: { description: 'metrics', ...json({ type: 'string' }, 'text/plain') },
        ...errorResponses(ref('Errors'), JSONAPI, ['unauthenticated', 'forbidden', 'invalid_token']),
      },
    },
  };
  paths['/openapi.json'] = {
    get: { summary: 'this document', responses: { 200: { description: 'OpenAPI 3.1', ...json({ type: 'object', required: ['openapi'] }) } } },
  };
  paths['/.well-known/jwks.json'] = {
    get: {
      summary: 'the public halves of the token-signing keys (RS256, ES256)',
      responses: { 200: { description: 'JWK set', ...json(ref('Jwks'), 'application/jwk-set+json') } },
    },
  };

  Object.assign(paths, forwardAuthPaths(), scimPaths());

  for (const a of catalog.actions) {
    // `object` attributes: the WebAuthn credential in the JSON form @simplewebauthn/browser returns.
    const properties = Object.fromEntries(
      Object.entries(a.input).map(([f, need]) => [
        f,
        need === 'object' || need === 'optional_object'
          ? { type: 'object', description: 'a WebAuthn credential as JSON (id, rawId, type "public-key", response with base64url fields)' }
          : need === 'list'
            ? { type: 'array', items: { type: 'string' }, maxItems: 50 }
            : { type: 'string' },
      ]),
    );
    const required = Object.entries(a.input)
      .filter(([, need]) => need === 'required' || need === 'object')
      .map(([f]) => f);
    paths[`/action/${a.onType}/${a.name}`] = {
      post: {
        operationId: `action_${a.name}`,
        summary: `the ${a.name} action${a.ignoresToken ? ' (always runs as a guest: no token read)' : ''}`,
        tags: ['actions'],
        security: a.ignoresToken ? [{}] : optionalBearer,
        requestBody: {
          required: true,
          ...json({ type: 'object', required: ['attributes'], properties: { attributes: { type: 'object', required, properties } } }),
        },
        responses: {
          200: { description: 'done', ...json(ref('ActionAnswer')) },
          ...errorResponses(ref('ActionError'), 'application/json', [...ERROR_CODES]),
        },
      },
    };
  }

  paths['/api/me'] = {
    get: {
      summary: "the caller's own account",
      tags: ['records'],
      security: bearer,
      responses: {
        200: {
          description: 'the account',
          ...json({ type: 'object', required: ['data'], properties: { data: ref('user_account'), meta: { type: 'object' } } }, JSONAPI),
        },
        ...errorResponses(ref('Errors'), JSONAPI, ['unauthenticated', 'invalid_token', 'unavailable']),
      },
    },
  };

  const readErrors = errorResponses(ref('Errors'), JSONAPI, ['invalid_input', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'unavailable']);
  const writeErrors = errorResponses(ref('Errors'), JSONAPI, [...ERROR_CODES]);
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  /** A to-many relationship: read its linkage, add to it, remove from it (204). */
  const relationship = (read: string, add: string, remove: string) => {
    const change = (summary: string) => ({
      summary,
      tags: ['groups'],
      security: bearer,
      requestBody: { required: true, ...json(ref('LinkageBody'), JSONAPI) },
      responses: { 204: { description: 'changed' }, ...writeErrors },
    });
    return {
      parameters: [idParam],
      get: {
        summary: read,
        tags: ['groups'],
        security: optionalBearer,
        responses: { 200: { description: 'linkage', ...json(ref('Linkage'), JSONAPI) }, ...readErrors },
      },
      post: change(add),
      delete: change(remove),
    };
  };

  for (const r of catalog.records) {
    const attributes = Object.fromEntries(Object.entries(r.attributes).map(([c, type]) => [c, COLUMN[type]]));
    schemas[r.name] = {
      type: 'object',
      required: ['type', 'id', 'attributes', 'links'],
      properties: {
        type: { const: r.name },
        id: { type: 'string' },
        attributes: { type: 'object', properties: attributes, additionalProperties: false },
        links: { type: 'object', required: ['self'], properties: { self: { type: 'string', format: 'uri' } }, additionalProperties: false },
      },
      additionalProperties: false,
    };
    const one = json({ type: 'object', required: ['data'], properties: { data: ref(r.name) }, additionalProperties: false }, JSONAPI);
    const page = json(
      {
        type: 'object',
        required: ['data', 'links', 'meta'],
        properties: {
          data: { type: 'array', items: ref(r.name) },
          links: { type: 'object', required: ['self', 'first'], additionalProperties: { type: 'string', format: 'uri' } },
          meta: {
            type: 'object',
            required: ['total', 'total_exact', 'page'],
            properties: {
              total: {
                type: 'integer',
                description: 'Rows the caller may read that match; a lower bound when total_exact is false (counted at most 10,000 rows past the page)',
              },
              total_exact: { type: 'boolean' },
              page: { type: 'object', required: ['size', 'number'], properties: { size: { type: 'integer' }, number: { type: 'integer' } } },
            },
          },
        },
        additionalProperties: false,
      },
      JSONAPI,
    );
    const writeBody = (attrs: Record<string, Schema>, required: string[], withId: boolean) => ({
      required: true,
      ...json(
        {
          type: 'object',
          required: ['data'],
          properties: {
            data: {
              type: 'object',
              required: withId ? ['type', 'id', 'attributes'] : ['type', 'attributes'],
              properties: {
                type: { const: r.name },
                ...(withId ? { id: { type: 'string' } } : {}),
                attributes: { type: 'object', required, properties: attrs, additionalProperties: false },
              },
            },
          },
        },
        JSONAPI,
      ),
    });
    const listPath: Record<string, unknown> = {
      get: {
        summary: `${r.name} records the caller may read, a page at a time`,
        tags: ['records'],
        security: optionalBearer,
        parameters: [
          { name: 'filter', in: 'query', schema: { type: 'string' }, description: `substring of ${r.filterColumns.join(' or ')}` },
          { name: 'sort', in: 'query', schema: { type: 'string' }, description: `${r.sortColumns.join(', ')}; a leading - sorts descending` },
          { name: 'page[size]', in: 'query', schema: { type: 'integer', minimum: 1, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default } },
          { name: 'page[number]', in: 'query', schema: { type: 'integer', minimum: 1 } },
        ],
        responses: { 200: { description: 'a page', ...page }, ...readErrors },
      },
    };
    if (r.createAttributes) {
      const attrs = Object.fromEntries(r.createAttributes.map((c) => [c, c in attributes ? attributes[c] : { type: 'string' }]));
      const required = r.name === 'user_account' ? r.createAttributes.filter((c) => c !== 'username') : ['name'];
      listPath.post = {
        summary: `create a ${r.name}`,
        tags: ['records'],
        security: optionalBearer,
        requestBody: writeBody(attrs, required, false),
        responses: { 201: { description: 'created', ...one }, ...writeErrors },
      };
    }
    paths[`/api/${r.name}`] = listPath;
    const rowPath: Record<string, unknown> = {
      parameters: [idParam],
      get: { summary: `one ${r.name}`, tags: ['records'], security: optionalBearer, responses: { 200: { description: 'the record', ...one }, ...readErrors } },
      patch: {
        summary: `change a ${r.name} (${Object.entries(r.writable)
          .map(([k, w]) => (w === 'administrators' ? `${k}: administrators only` : k))
          .join(', ')})`,
        tags: ['records'],
        security: bearer,
        requestBody: writeBody(Object.fromEntries(Object.keys(r.writable).map((c) => [c, attributes[c] ?? { type: 'string' }])), [], true),
        responses: { 200: { description: 'the changed record', ...one }, ...writeErrors },
      },
    };
    if (r.deletable)
      rowPath.delete = { summary: `delete a ${r.name}`, tags: ['records'], security: bearer, responses: { 204: { description: 'deleted' }, ...writeErrors } };
    paths[`/api/${r.name}/{id}`] = rowPath;
    paths[`/api/${r.name}/{id}/relationships/usergroups`] = relationship(
      `groups this ${r.name} is shared with`,
      'share with groups',
      'stop sharing with groups',
    );
  }
  paths['/api/usergroup/{id}/relationships/members'] = relationship("a group's members", 'add members', 'remove members');
  paths['/api/usergroup/{id}/relationships/groups'] = relationship(
    'the groups inside a group (their members are its members too)',
    'put groups inside it (409: a cycle, or a chain deeper than 10)',
    'take groups out of it',
  );

  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse',
      version: '0.1.0',
      description:
        'Accounts, permissions and tokens. The OpenID Connect provider (/oidc/*, /.well-known/openid-configuration) and the HTML pages (/signin, /signup, /account, …) are described by their own standards and docs/oidc.md.',
    },
    servers: [{ url: publicUrl }],
    tags: [{ name: 'actions' }, { name: 'records' }, { name: 'groups' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        scimToken: { type: 'http', scheme: 'bearer', description: 'a SCIM token (ghscim_…) made with gatehouse scim token add; it opens /scim/v2 only' },
      },
    },
  };
}
