/** Parsing list query parameters against an allow-list: anything else is refused with 400. */
import { AppError } from '../errors';
import type { RecordType } from './types';

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 500;
const ALLOWED = new Set(['filter', 'page[size]', 'page[number]', 'sort']);

export interface ListParams {
  filter?: string;
  size: number;
  number: number;
  sort: Array<{ column: string; order: 'asc' | 'desc' }>;
}

function single(query: Query, key: string): string | undefined {
  const v = query[key];
  if (Array.isArray(v)) throw new AppError('invalid_input', `query parameter ${key} is given more than once`);
  return v;
}

function positive(raw: string | undefined, key: string, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new AppError('invalid_input', `${key} must be a whole number from 1 to ${max}`);
  }
  return Number(raw);
}

/** Query parameters as the HTTP layer parsed them. */
export type Query = Record<string, string | string[] | undefined>;

export function parseListParams(type: RecordType, query: Query): ListParams {
  for (const key of Object.keys(query)) {
    if (!ALLOWED.has(key)) throw new AppError('invalid_input', `unknown query parameter ${key.slice(0, 40)}`);
  }
  const filter = single(query, 'filter');
  if (filter !== undefined && filter.length > 200) throw new AppError('invalid_input', 'filter must be at most 200 characters');
  const size = positive(single(query, 'page[size]'), 'page[size]', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const number = positive(single(query, 'page[number]'), 'page[number]', 1, 1_000_000);
  const sort: ListParams['sort'] = [];
  const rawSort = single(query, 'sort');
  if (rawSort !== undefined) {
    for (const part of rawSort.split(',')) {
      const desc = part.startsWith('-');
      const column = desc ? part.slice(1) : part;
      if (!type.sortColumns.includes(column)) {
        throw new AppError('invalid_input', `sort must be a comma-separated list of ${type.sortColumns.join(', ')} (prefix - for descending)`);
      }
      sort.push({ column, order: desc ? 'desc' : 'asc' });
    }
  }
  return { filter, size, number, sort };
}
