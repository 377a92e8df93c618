/** JSON:API shaping, in one place: rows → resource objects, pages → documents with links. */
import type { RecordPage } from '../records/service';
import type { RecordType } from '../records/types';

export const JSONAPI = 'application/vnd.api+json';

export interface Resource {
  type: string;
  id: string;
  attributes: Record<string, unknown>;
  links: { self: string };
}

export function toResource(type: RecordType, row: Record<string, unknown>, base: string): Resource {
  const attributes: Record<string, unknown> = {};
  // Allow-list: only the type's declared attributes ever leave the server.
  for (const column of type.attributes) {
    if (!Object.hasOwn(row, column)) continue;
    const value = row[column];
    attributes[column] = column.endsWith('_at') && typeof value === 'number' ? new Date(value).toISOString() : value;
  }
  const id = String(row.reference_id);
  return { type: type.name, id, attributes, links: { self: `${base}/api/${type.name}/${id}` } };
}

export function pageDocument(type: RecordType, page: RecordPage, base: string, query: Record<string, string | string[] | undefined>) {
  const last = Math.max(1, Math.ceil(page.total / page.size));
  let fixed = `${base}/api/${type.name}?`;
  if (typeof query.filter === 'string') fixed += `filter=${encodeURIComponent(query.filter)}&`;
  if (typeof query.sort === 'string') fixed += `sort=${encodeURIComponent(query.sort)}&`;
  fixed += `page%5Bsize%5D=${page.size}&page%5Bnumber%5D=`;
  const link = (n: number) => fixed + n;
  const links: Record<string, string> = { self: link(page.number), first: link(1), last: link(last) };
  if (page.number > 1) links.prev = link(Math.min(page.number - 1, last));
  if (page.number < last) links.next = link(page.number + 1);
  return {
    data: page.rows.map((r) => toResource(type, r, base)),
    links,
    meta: { total: page.total, page: { size: page.size, number: page.number } },
  };
}
