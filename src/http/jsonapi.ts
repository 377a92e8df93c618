/** JSON:API shaping, in one place: the core's record views → resource objects and documents with links. */
import type { Query, RecordPage, RecordView } from '../core';

export const JSONAPI = 'application/vnd.api+json';

export interface Resource extends RecordView {
  links: { self: string };
}

export function toResource(view: RecordView, base: string): Resource {
  return { ...view, links: { self: `${base}/api/${view.type}/${view.id}` } };
}

export function pageDocument(type: string, page: RecordPage, base: string, query: Query) {
  const last = Math.max(1, Math.ceil(page.total / page.size));
  let fixed = `${base}/api/${type}?`;
  if (typeof query.filter === 'string') fixed += `filter=${encodeURIComponent(query.filter)}&`;
  if (typeof query.sort === 'string') fixed += `sort=${encodeURIComponent(query.sort)}&`;
  fixed += `page%5Bsize%5D=${page.size}&page%5Bnumber%5D=`;
  const link = (n: number) => fixed + n;
  // An inexact total is a lower bound: no `last` link then, and always a `next`.
  const links: Record<string, string> = { self: link(page.number), first: link(1) };
  if (page.totalExact) links.last = link(last);
  if (page.number > 1) links.prev = link(page.totalExact ? Math.min(page.number - 1, last) : page.number - 1);
  if (page.number < last || !page.totalExact) links.next = link(page.number + 1);
  return {
    data: page.views.map((v) => toResource(v, base)),
    links,
    meta: { total: page.total, total_exact: page.totalExact, page: { size: page.size, number: page.number } },
  };
}
