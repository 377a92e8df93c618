/** Pieces of /openapi.json kept apart from the main document (src/http/openapi.ts). */
export type Schema = Record<string, unknown>;
export const json = (schema: Schema, type = 'application/json') => ({ content: { [type]: { schema } } });
/** Anonymous, or a bearer access token. */
export const optionalBearer = [{}, { bearer: [] }];

/** Forward authentication: reverse proxies ask about each request (docs/forward-auth.md). */
export function forwardAuthPaths(): Record<string, Record<string, unknown>> {
  const remote = Object.fromEntries(
    ['Remote-User', 'Remote-Email', 'Remote-Name', 'Remote-Groups'].map((h) => [
      h,
      { description: `${h} of the signed-in account (empty when unknown)`, schema: { type: 'string' } },
    ]),
  );
  const reason = {
    'X-Gatehouse-Reason': {
      description: 'why it was refused (untrusted_proxy, no_app, not_in_group, second_factor_required, unauthenticated, bad_request)',
      schema: { type: 'string' },
    },
  };
  const refusal = (description: string) => ({ description, headers: reason, ...json({ type: 'string' }, 'text/plain') });
  const forwardAnswers = {
    200: { description: 'allowed: the proxy passes the request on, with the Remote-* headers', headers: remote },
    400: refusal('the proxy did not send the original request'),
    401: refusal('not signed in (an XHR or API client; a browser gets a sign-in address in Location)'),
    403: refusal('refused: an untrusted proxy, no app for the host, not in an allowed group, or a second factor needed'),
    503: { description: 'the store is unavailable' },
  };
  const forward = (summary: string, extra: Record<string, unknown> = {}) => ({
    summary,
    tags: ['forward authentication'],
    security: optionalBearer,
    responses: { ...forwardAnswers, ...extra },
  });
  return {
    '/auth/forward': {
      get: forward('Caddy forward_auth, Traefik ForwardAuth: the original request in X-Forwarded-Method, -Proto, -Host and -Uri', {
        302: { description: 'not signed in, a browser navigation (GET, HEAD): to <public-url>/signin?rd=<the original address>' },
        303: { description: 'not signed in, a browser after another method' },
      }),
    },
    '/auth/request': { get: forward('nginx auth_request: the original request in X-Original-URL and X-Original-Method') },
    '/auth/denied': {
      get: {
        summary: 'why a request was refused, in words, for a proxy to show (the documented nginx block does)',
        tags: ['forward authentication'],
        parameters: [{ name: 'reason', in: 'query', required: false, schema: { type: 'string' } }],
        responses: { 403: refusal('the reason in words') },
      },
    },
  };
}

/** SCIM 2.0 (RFC 7644) at /scim/v2, for provisioning services holding a SCIM token (docs/scim.md). */
export function scimPaths(): Record<string, Record<string, unknown>> {
  const scimJson = (description: string) => ({ description, ...json({ type: 'object' }, 'application/scim+json') });
  const list = ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes'].map((name) => ({
    name,
    in: 'query',
    required: false,
    schema: { type: 'string' },
  }));
  const projection = list.slice(3);
  const id = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const read = (summary: string, parameters: unknown[] = []) => ({
    get: {
      summary,
      tags: ['SCIM'],
      security: [{ scimToken: [] }],
      parameters,
      responses: {
        200: scimJson('the resource, or a ListResponse'),
        400: scimJson('a SCIM Error (scimType invalidFilter, invalidPath, invalidValue)'),
        401: scimJson('no SCIM token, or a revoked one'),
        404: scimJson('a SCIM Error'),
      },
    },
  });
  const write = (summary: string, ok: number, parameters: unknown[] = [], body = true) => ({
    summary,
    tags: ['SCIM'],
    security: [{ scimToken: [] }],
    parameters: [...parameters, ...(parameters.length > 0 ? [{ name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } }] : [])],
    ...(body ? { requestBody: { required: true, ...json({ type: 'object' }, 'application/scim+json') } } : {}),
    responses: {
      [ok]: ok === 204 ? { description: 'done' } : scimJson('the resource as it now is'),
      400: scimJson('a SCIM Error (scimType invalidValue, invalidPath, mutability, noTarget, tooMany)'),
      401: scimJson('no SCIM token, or a revoked one'),
      404: scimJson('a SCIM Error'),
      409: scimJson('a SCIM Error (scimType uniqueness; the last administrator)'),
      412: scimJson('If-Match names an older version'),
      413: scimJson('a body over 1 MiB'),
    },
  });
  const resource = (what: string, listed: ReturnType<typeof read>, one: ReturnType<typeof read>) => [
    { ...listed, post: write(`make ${what}`, 201) },
    {
      ...one,
      put: write(`replace ${what}`, 200, [id]),
      patch: write(`change ${what} (a PatchOp)`, 200, [id]),
      delete: write(`delete ${what}`, 204, [id], false),
    },
  ];
  const [users, user] = resource('an account', read('accounts, filtered and paged', list), read('one account', [id, ...projection]));
  const [groups, group] = resource('a managed group', read('managed groups, filtered and paged', list), read('one managed group', [id, ...projection]));
  const search = (summary: string) => ({
    post: {
      ...write(summary, 200),
      requestBody: { required: true, ...json({ type: 'object' }, 'application/scim+json') },
      responses: {
        200: scimJson('a ListResponse'),
        400: scimJson('a SCIM Error (scimType invalidFilter, invalidPath, invalidValue)'),
        401: scimJson('no SCIM token, or a revoked one'),
      },
    },
  });
  return {
    '/scim/v2/.search': search('a SearchRequest over Users and Groups, paged as one list'),
    '/scim/v2/Users/.search': search('a SearchRequest over accounts'),
    '/scim/v2/Groups/.search': search('a SearchRequest over managed groups'),
    '/scim/v2/ServiceProviderConfig': read('what this SCIM service provider supports'),
    '/scim/v2/ResourceTypes': read('the resource types: User and Group'),
    '/scim/v2/ResourceTypes/{id}': read('one resource type', [id]),
    '/scim/v2/Schemas': read('the schemas of what Gatehouse keeps'),
    '/scim/v2/Schemas/{id}': read('one schema', [id]),
    '/scim/v2/Users': users,
    '/scim/v2/Users/{id}': user,
    '/scim/v2/Groups': groups,
    '/scim/v2/Groups/{id}': group,
  };
}
