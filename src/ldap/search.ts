/**
 * Reads (RFC 4511 4.5 search, 4.10 compare): the entries in scope, asked of the core's directory
 * as the bound identity may see them, filtered and answered from the tree; paged results
 * (RFC 2696) and the root DSE. Strangers see the root DSE only.
 *
 * Every request shares one thread, so a search never holds it: the filter is compiled once
 * (match.ts), its work (cost per entry times the entries) must fit the search's and the
 * connection's budgets (adminLimitExceeded), the entries are tested in slices of a few
 * milliseconds with other work let in between, and a search that runs past its time limit ends
 * (timeLimitExceeded).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SearchOutcome } from '../core';
import { entry, OID, OP, pagedDone, result, RESULT, type LdapFilter, type Request } from './protocol';
import { chainOf, groupsHint, peopleHint, select, type Entry, type Tree } from './tree';
import { compile, matches, Meter, OverBudget, type Matcher } from './match';
import { ENTRY_WORK, SEARCH_TIME_MS, SEARCH_WORK, SLICE_MS } from './limits';
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
  // The client's time limit (seconds, 0: none of its own), never past the server's.
  const seconds = Math.min(search.timeLimit > 0 ? search.timeLimit : Infinity, SEARCH_TIME_MS / 1000);
  const time = { seconds, deadline: performance.now() + seconds * 1000 };
  const ending = await c.searches.run(async () => {
    const outcome = await found(c, at, search, filter, time);
    return 'code' in outcome ? outcome : answer(c, r, outcome.entries);
  });
  done(ending.code, ending.text, ending.matched, ending.controls);
}

/** How a search ends: its result code and text (and the DN matched, the paged results control). */
interface Ending {
  code: number;
  text: string;
  matched?: string;
  controls?: Parameters<typeof result>[5];
}

/**
 * Sends the page of entries the search asked for, a slice at a time (each slice's entries leave
 * in as few packets as they fit), within its size limit.
 */
async function answer(c: Session, r: Extract<Request, { kind: 'search' }>, entries: readonly Entry[]): Promise<Ending> {
  const { search } = r;
  const { start, end, next } = page(r.paged, entries.length);
  const shown = entries.slice(start, end);
  const limit = search.sizeLimit > 0 ? search.sizeLimit : Infinity;
  c.socket.cork();
  try {
    await inSlices(shown.slice(0, limit), (e) => c.send(entry(r.id, e.dn, select(e, search.attributes, search.typesOnly))), {
      before: () => c.socket.uncork(),
      goOn: () => (c.socket.cork(), !c.socket.destroyed),
    });
  } finally {
    c.socket.uncork();
  }
  if (shown.length > limit) return { code: RESULT.sizeLimitExceeded, text: `more than ${search.sizeLimit} entries` };
  return { code: RESULT.success, text: '', controls: next ? pagedDone(next) : undefined };
}

/**
 * A search's entries, read and tested within its budgets and time (one of SEARCHES_AT_ONCE), or
 * the result that ends it instead.
 */
async function found(
  c: Session,
  at: Exclude<ReturnType<Tree['locate']>, null>,
  search: Extract<Request, { kind: 'search' }>['search'],
  filter: LdapFilter,
  time: { seconds: number; deadline: number },
): Promise<{ entries: Entry[] } | Ending> {
  const late = () => ({ code: RESULT.timeLimitExceeded, text: `the search ran past its time limit of ${time.seconds} s: narrow the base or the filter` });
  if (performance.now() > time.deadline) return late(); // waited its turn for too long
  const entries = await candidates(c, at, search.scope, filter, search.attributes);
  if (entries === null) return { code: RESULT.noSuchObject, text: 'no such entry', matched: at.at === 'person' ? c.tree.people : c.tree.groups };
  const meter = new Meter(SEARCH_WORK, ENTRY_WORK);
  const matcher = compile(filter, meter);
  const tooMuch = (units: number) => ({
    code: RESULT.adminLimitExceeded,
    text: `this filter over ${entries.length} entries is more work than one search may do (${units > SEARCH_WORK ? 'over ' : ''}${units} units, at most ${SEARCH_WORK}): narrow the base or the filter`,
  });
  // The least it will cost, before any entry is tested; what it really cost is charged after.
  const estimate = matcher.cost * entries.length;
  if (estimate > SEARCH_WORK) return tooMuch(estimate);
  const budget = c.work.take(estimate);
  if (!budget.taken)
    return {
      code: RESULT.adminLimitExceeded,
      text: `this connection has used its share of the directory's work for now: search again in ${budget.waitSeconds} s`,
    };
  try {
    const passed = await filtered(c, entries, matcher, meter, time.deadline);
    return passed === null ? late() : { entries: passed };
  } catch (err) {
    if (err instanceof OverBudget && err.over === 'entry')
      return {
        code: RESULT.adminLimitExceeded,
        text: `this filter is more work than one entry's test may do (over ${ENTRY_WORK} units: many terms over an attribute of many values): narrow the filter`,
      };
    if (err instanceof OverBudget) return tooMuch(meter.units);
    throw err;
  } finally {
    c.work.charge(meter.units - estimate);
  }
}

/**
 * The entries that pass, tested a slice at a time: after SLICE_MS the search waits its turn behind
 * whatever else is ready (requests, other searches), so /ping and a sign-in are answered between
 * slices. Null when the deadline passes first or the connection is gone.
 */
async function filtered(c: Session, entries: readonly Entry[], matcher: Matcher, meter: Meter, deadline: number): Promise<Entry[] | null> {
  const found: Entry[] = [];
  const done = await inSlices(entries, (e) => (meter.entry(), matcher.test(e) && found.push(e)), {
    goOn: () => !c.socket.destroyed && performance.now() <= deadline,
  });
  return done ? found : null;
}

/**
 * Calls `each` on every item, letting other work run every SLICE_MS: `before` is called before
 * each such wait, and after it, `goOn` says whether to go on (false: stopped).
 */
async function inSlices<T>(items: readonly T[], each: (item: T) => unknown, between: { before?: () => void; goOn?: () => boolean } = {}): Promise<boolean> {
  let slice = performance.now();
  for (let i = 0; i < items.length; i++) {
    if (performance.now() - slice >= SLICE_MS) {
      between.before?.();
      await nextTurn();
      if (between.goOn && !between.goOn()) return false;
      slice = performance.now();
    }
    each(items[i]);
  }
  return true;
}

/** Entries made from rows, a slice at a time (a hundred thousand people take a while to shape). */
async function shaped<T>(rows: readonly T[], shape: (row: T) => Entry): Promise<Entry[]> {
  const out: Entry[] = [];
  await inSlices(rows, (r) => out.push(shape(r)));
  return out;
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
  const people = async () => shaped(await dir.people(identity, peopleHint(filter, tree)), (p) => tree.person(p));
  const groups = async () => shaped(await dir.groups(identity, groupsHint(filter, attributes, tree)), (g) => tree.group(g));
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
      const found = await dir.groups(identity, { name: at.name, chain: chainOf(filter, tree), uids: true });
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
