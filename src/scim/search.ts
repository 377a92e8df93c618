/**
 * A SearchRequest body (POST …/.search, RFC 7644 section 3.4.3) read into the query a GET would
 * carry, so a search and a list run the same code (scim/operations.ts, scim/filter.ts).
 * Parameter names are case-insensitive, as in the write bodies.
 */
import { AppError } from '../errors';
import type { Json } from './resources';
import { get } from './writes';

const invalid = (message: string) => new AppError('invalid_input', message, { scimType: 'invalidValue' });

const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

/** A SearchRequest body (POST …/.search, RFC 7644 section 3.4.3) as the query a GET would carry. */
export function searchQuery(body: Json): { filter?: string; startIndex?: string; count?: string; attributes?: string; excludedAttributes?: string } {
  const schemas = get(body, 'schemas');
  if (schemas !== undefined && (!Array.isArray(schemas) || !schemas.some((s) => String(s).toLowerCase() === SEARCH_REQUEST.toLowerCase()))) {
    throw invalid(`a search body names the schema ${SEARCH_REQUEST}`);
  }
  for (const key of Object.keys(body)) {
    if (!['schemas', 'filter', 'startindex', 'count', 'attributes', 'excludedattributes', 'sortby', 'sortorder'].includes(key.toLowerCase())) {
      throw invalid(`unknown search parameter ${key.slice(0, 60)}`);
    }
  }
  if (get(body, 'sortBy') !== undefined) throw invalid('sorting is not supported (see /ServiceProviderConfig)');
  const list = (name: string): string | undefined => {
    const v = get(body, name);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalid(`${name} must be an array of attribute names`);
    return (v as string[]).join(',');
  };
  const int = (name: string): string | undefined => {
    const v = get(body, name);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(`${name} must be an integer`);
    return String(v);
  };
  const filter = get(body, 'filter');
  if (filter !== undefined && filter !== null && typeof filter !== 'string') throw invalid('filter must be a string');
  const q = {
    filter: filter ?? undefined,
    startIndex: int('startIndex'),
    count: int('count'),
    attributes: list('attributes'),
    excludedAttributes: list('excludedAttributes'),
  };
  return Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined));
}
