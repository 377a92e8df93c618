/**
 * Reads (RFC 4511 4.5 search, 4.10 compare): the entries in scope, asked of the core's directory
 * as the bound identity may see them, filtered and answered from the tree; paged results
 * (RFC 2696) and the root DSE. Strangers see the root DSE only.
 */
import type { SearchOutcome } from '../core';
import { entry, OID, OP, pagedDone, result, RESULT, type LdapFilter, type Request } from './protocol';
import { chainOf, groupsHint, matches, peopleHint, select, type Entry, type Tree } from './tree';
import type { Session } from './session';

export async function search(c: Session, r: Extract<Request, { kind: 'search' }>): Promise<void> {
  const { search } = r;
  const done = (code: number, text = '', matched = '', controls?: Parameters<typeof result>[5]) => {
    c.core.directory.searched(outcomeOf(code));
    c.send(result(r.id, OP.searchDone, code, text, matched, controls));
  };
  if (r.criticalUnknown) return done(RESULT.unavailableCriticalExtension, 'a critical control this directory does not support');
  if ('refused' in search.filter) return done(RESULT.unwillingToPerform, search.filter.refused);
  const filter = search.filter;
  const at = c.tree.locate(search.baseDN);
  if (at === null) return done(RESULT.invalidDNSyntax, 'the base is not a DN');
  if (at.at === 'root' && search.scope === 'base') {
    const dse = c.tree.rootDse(c.secure ? [OID.whoAmI, OID.startTls] : [OID.whoAmI], [OID.pagedResults]);
    if (matches(filter, dse)) c.send(entry(r.id, '', select(dse, search.attributes.length ? search.attributes : ['*', '+'], search.typesOnly)));
    return done(RESULT.success);
  }
  if (at.at === 'unknown') return done(RESULT.noSuchObject, 'no such entry', at.matched);
  if (at.at === 'root') return done(RESULT.noSuchObject, `the directory's base is ${c.tree.base}`);
  if (!c.identity) return done(RESULT.insufficientAccessRights, 'bind first');
  const entries = await candidates(c, at, search.scope, filter, search.attributes);
  if (entries === null) return done(RESULT.noSuchObject, 'no such entry', at.at === 'person' ? c.tree.people : c.tree.groups);
  const found = entries.filter((e) => matches(filter, e));
  const { start, end, next } = page(r.paged, found.length);
  const limit = search.sizeLimit > 0 ? search.sizeLimit : Infinity;
  let sent = 0;
  // The entries and the result leave in as few packets as they fit.
  const socket = c.socket;
  socket.cork();
  try {
    for (const e of found.slice(start, end)) {
      if (sent >= limit) return done(RESULT.sizeLimitExceeded, `more than ${search.sizeLimit} entries`);
      c.send(entry(r.id, e.dn, select(e, search.attributes, search.typesOnly)));
      sent++;
    }
    done(RESULT.success, '', '', next ? pagedDone(next) : undefined);
  } finally {
    socket.uncork();
  }
}

/** Paged results (RFC 2696): the cookie is the offset of the next page. Without the control: everything, no cookie. */
function page(paged: Extract<Request, { kind: 'search' }>['paged'], total: number): { start: number; end: number; next: Buffer | null } {
  if (!paged) return { start: 0, end: total, next: null };
  const size = paged.value?.size ?? 0;
  const cookie = paged.value?.cookie;
  const start = cookie && cookie.length ? Number(cookie.toString('utf8')) || 0 : 0;
  const end = size > 0 ? Math.min(total, start + size) : total;
  return { start, end, next: Buffer.from(end < total ? String(end) : '', 'utf8') };
}

/**
 * Compare (RFC 4511 4.10): does the entry hold this value? Read as a base search of the entry,
 * with the same rules: bound first, and only what the identity may see.
 */
export async function compare(c: Session, r: Extract<Request, { kind: 'compare' }>): Promise<void> {
  const done = (code: number, text = '', matched = '') => c.send(result(r.id, OP.compareResponse, code, text, matched));
  const at = c.tree.locate(r.dn);
  if (at === null) return done(RESULT.invalidDNSyntax, 'the entry is not a DN');
  if (at.at === 'unknown') return done(RESULT.noSuchObject, 'no such entry', at.matched);
  if (at.at === 'root') return done(RESULT.noSuchObject, `the directory's base is ${c.tree.base}`);
  if (!c.identity) return done(RESULT.insufficientAccessRights, 'bind first');
  const [found] = (await candidates(c, at, 'base', { present: 'objectclass' })) ?? [];
  if (!found) return done(RESULT.noSuchObject, 'no such entry', at.at === 'person' ? c.tree.people : c.tree.groups);
  if (!matches({ present: r.attribute }, found)) return done(RESULT.noSuchAttribute, `the entry has no ${r.attribute.slice(0, 60)}`);
  done(matches({ compare: 'eq', attribute: r.attribute, value: r.value }, found) ? RESULT.compareTrue : RESULT.compareFalse);
}

/** The entries in scope of a search, in DN order; null when the base names an entry that does not exist. */
async function candidates(
  c: Session,
  at: Exclude<ReturnType<Tree['locate']>, null>,
  scope: string,
  filter: LdapFilter,
  attributes: readonly string[] = ['*'],
): Promise<Entry[] | null> {
  const identity = c.identity!;
  const dir = c.core.directory;
  const tree = c.tree;
  const people = async () => (await dir.people(identity, peopleHint(filter, tree))).map((p) => tree.person(p));
  const groups = async () => (await dir.groups(identity, groupsHint(filter, attributes, tree))).map((g) => tree.group(g));
  switch (at.at) {
    case 'base':
      if (scope === 'base') return [tree.baseEntry()];
      if (scope === 'one') return [tree.ou('people'), tree.ou('groups')];
      return [tree.baseEntry(), tree.ou('people'), ...(await people()), tree.ou('groups'), ...(await groups())];
    case 'people':
      return scope === 'base' ? [tree.ou('people')] : [...(scope === 'one' ? [] : [tree.ou('people')]), ...(await people())];
    case 'groups':
      return scope === 'base' ? [tree.ou('groups')] : [...(scope === 'one' ? [] : [tree.ou('groups')]), ...(await groups())];
    case 'person': {
      const found = await dir.people(identity, { username: at.name });
      if (found.length === 0) return null;
      return scope === 'one' ? [] : [tree.person(found[0])];
    }
    case 'group': {
      const found = await dir.groups(identity, { name: at.name, chain: chainOf(filter, tree) });
      if (found.length === 0) return null;
      return scope === 'one' ? [] : [tree.group(found[0])];
    }
    default:
      return [];
  }
}

/** A search's result code as a /metrics outcome. */
function outcomeOf(code: number): SearchOutcome {
  if (code === RESULT.success || code === RESULT.sizeLimitExceeded) return 'ok';
  if (code === RESULT.noSuchObject || code === RESULT.invalidDNSyntax) return 'not_found';
  return 'refused';
}
