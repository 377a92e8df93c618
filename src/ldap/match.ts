/**
 * A search filter compiled once per search into a test of an entry, and a meter of the work the
 * tests do. Everything that does not depend on the entry is done at compile time: attribute names
 * lower case, asserted values normalised (DNs as DNs). An OR of equality terms on one attribute
 * (and of in-chain terms, which on memberOf are equality: memberOf already holds every group at
 * any depth) becomes one set, tested against the entry's values: a filter naming 4,000 groups
 * costs one intersection per entry, not 4,000 term evaluations.
 *
 * Work is counted as the tests go, by the values they look at (a substring term over a group of
 * 5,000 members costs 5,000 times its pieces, not one): past the meter's limit, a test stops in the
 * middle (OverBudget), so no single entry can hold the thread for long.
 */
import type { ExtensibleMatch, LdapFilter } from './protocol';
import { INTEGER_VALUED, inChainOn, normalValue, valuesOf, type Entry } from './tree';

/**
 * A search's work so far, in units (one value looked at by one term): past `limit` in all, or past
 * `perEntry` on one entry's test (which runs without a pause: one entry may not hold the thread
 * for more than a few milliseconds), OverBudget.
 */
export class Meter {
  units = 0;
  private entryStart = 0;
  constructor(
    readonly limit: number = Infinity,
    readonly perEntry: number = Infinity,
  ) {}

  /** The next entry's test begins. */
  entry(): void {
    this.entryStart = this.units;
  }

  spend(n: number): void {
    this.units += n;
    if (this.units > this.limit) throw new OverBudget('search');
    if (this.units - this.entryStart > this.perEntry) throw new OverBudget('entry');
  }
}

export class OverBudget extends Error {
  constructor(readonly over: 'search' | 'entry') {
    super(`over the ${over}'s budget`);
  }
}

export interface Matcher {
  test(e: Entry): boolean;
  /** The least work one entry's test costs (a unit per term, a few per set): an estimate before any is tested. */
  cost: number;
}

/** What a set of asserted values costs per entry at least: an intersection, cheaper than its terms. */
const SET_COST = 4;

/**
 * An entry's values of one attribute, normalised once per entry and attribute, as a set: a
 * filter's many terms over a person in a thousand groups cost a lookup each, not a parse of every
 * DN for every term. Normalising is work too, a unit per value, the first time.
 */
const normalised = new WeakMap<Entry, Map<string, ReadonlySet<string>>>();
function normalValuesOf(e: Entry, type: string, meter: Meter): ReadonlySet<string> {
  let byType = normalised.get(e);
  if (!byType) normalised.set(e, (byType = new Map()));
  let set = byType.get(type);
  if (!set) {
    const values = valuesOf(e, type);
    meter.spend(values.length);
    byType.set(type, (set = new Set(values.map((v) => normalValue(type, v)))));
  }
  return set;
}

/** A term that asserts one value: a key of the values it can be pooled with in an OR, and the value. */
function pooled(f: LdapFilter): { key: string; value: string } | null {
  if ('compare' in f && (f.compare === 'eq' || f.compare === 'approx')) {
    const a = f.attribute.toLowerCase();
    return { key: `=${a}`, value: normalValue(a, f.value) };
  }
  if ('extensible' in f) {
    const on = inChainOn(f.extensible);
    if (on === 'memberof') return { key: '=memberof', value: normalValue('memberof', f.extensible.value) };
    if (on === 'member') return { key: 'chain', value: normalValue('member', f.extensible.value) };
  }
  return null;
}

/** Whether two sets share a value, walking the smaller (a unit per value walked). */
function meets(a: ReadonlySet<string>, b: ReadonlySet<string>, meter: Meter): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  meter.spend(1 + small.size);
  for (const v of small) if (large.has(v)) return true;
  return false;
}

const none: ReadonlySet<string> = new Set();

/** A set of values pooled from an OR's terms: true when the entry holds any of them. */
function anyOf(key: string, values: ReadonlySet<string>, meter: Meter): Matcher {
  if (key === 'chain') return { test: (e) => meets(e.inChain ?? none, values, meter), cost: SET_COST };
  const type = key.slice(1);
  return { test: (e) => meets(normalValuesOf(e, type, meter), values, meter), cost: SET_COST };
}

/** Compiles a filter (RFC 4511 4.5.1.7) into a test of an entry. */
export function compile(f: LdapFilter, meter: Meter = new Meter()): Matcher {
  if ('and' in f) {
    const parts = f.and.map((g) => compile(g, meter));
    return { test: (e) => (meter.spend(1), parts.every((p) => p.test(e))), cost: 1 + sum(parts) };
  }
  if ('or' in f) {
    const pools = new Map<string, Set<string>>();
    const rest: Matcher[] = [];
    for (const g of f.or) {
      const p = pooled(g);
      if (p === null) rest.push(compile(g, meter));
      else pools.set(p.key, (pools.get(p.key) ?? new Set()).add(p.value));
    }
    const parts = [...[...pools].map(([key, values]) => anyOf(key, values, meter)), ...rest];
    return { test: (e) => (meter.spend(1), parts.some((p) => p.test(e))), cost: 1 + sum(parts) };
  }
  if ('not' in f) {
    const inner = compile(f.not, meter);
    return { test: (e) => (meter.spend(1), !inner.test(e)), cost: 1 + inner.cost };
  }
  if ('present' in f) {
    const type = f.present.toLowerCase();
    return { test: (e) => (meter.spend(1), valuesOf(e, type).length > 0), cost: 1 };
  }
  if ('compare' in f) {
    const type = f.attribute.toLowerCase();
    const value = normalValue(type, f.value);
    const ordered = (e: Entry) => {
      const have = normalValuesOf(e, type, meter);
      meter.spend(1 + have.size);
      return [...have];
    };
    if (INTEGER_VALUED.has(type)) {
      // uidNumber>=10000: as numbers, never as strings ("9" sorts after "10000"); a value that is no integer matches nothing.
      const n = /^-?\d{1,15}$/.test(value.trim()) ? Number(value) : NaN;
      const numbers = (e: Entry) => ordered(e).map(Number);
      if (f.compare === 'ge') return { test: (e) => numbers(e).some((v) => v >= n), cost: 2 };
      if (f.compare === 'le') return { test: (e) => numbers(e).some((v) => v <= n), cost: 2 };
    }
    if (f.compare === 'ge') return { test: (e) => ordered(e).some((v) => v >= value), cost: 2 };
    if (f.compare === 'le') return { test: (e) => ordered(e).some((v) => v <= value), cost: 2 };
    // Equality, and approximate as equality.
    return { test: (e) => (meter.spend(1), normalValuesOf(e, type, meter).has(value)), cost: 1 };
  }
  if ('substring' in f) {
    const { attribute, initial, any, final } = f.substring;
    const type = attribute.toLowerCase();
    const [i0, f0, parts] = [initial.toLowerCase(), final.toLowerCase(), any.map((a) => a.toLowerCase())];
    const test = (raw: string) => {
      const v = raw.toLowerCase();
      if (v.length < i0.length + f0.length || !v.startsWith(i0) || !v.endsWith(f0)) return false;
      let at = i0.length;
      const end = v.length - f0.length;
      for (const part of parts) {
        const found = v.indexOf(part, at);
        if (found < 0 || found + part.length > end) return false;
        at = found + part.length;
      }
      return true;
    };
    return {
      test: (e) => {
        const values = valuesOf(e, type);
        meter.spend(1 + values.length * (1 + parts.length));
        return values.some(test);
      },
      cost: 2 + parts.length,
    };
  }
  return extensible(f.extensible, meter);
}

/**
 * An extensible match: only the in-chain rule on memberOf, member or uniqueMember is understood.
 * memberOf already holds every group at any depth, so there it is equality; on member, the
 * group's inChain says who is inside it at any depth. Any other rule or attribute matches
 * nothing, as every extensible match did before nesting.
 */
function extensible(x: ExtensibleMatch, meter: Meter): Matcher {
  const on = inChainOn(x);
  if (on === 'memberof') {
    const value = normalValue('memberof', x.value);
    return { test: (e) => (meter.spend(1), normalValuesOf(e, 'memberof', meter).has(value)), cost: 1 };
  }
  if (on === 'member') {
    const value = normalValue('member', x.value);
    return { test: (e) => (meter.spend(1), e.inChain?.has(value) ?? false), cost: 1 };
  }
  return { test: () => (meter.spend(1), false), cost: 1 };
}

const sum = (parts: readonly Matcher[]) => parts.reduce((n, p) => n + p.cost, 0);

/** Whether an entry matches a filter (compiled for this one entry, unmetered: a search compiles once for all). */
export const matches = (f: LdapFilter, e: Entry): boolean => compile(f).test(e);
