/**
 * SCIM filters (RFC 7644 section 3.4.2.2), parsed by scim2-parse-filter and mapped onto the
 * store's columns. Only the attributes Gatehouse keeps can be filtered on; anything else is a
 * SCIM `invalidFilter` (a syntax error) or `invalidPath` (an attribute it does not know), never a
 * scan. A person has one email, of type "work" and primary: `emails[type eq "work"].value` and
 * `emails.value` both name it.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import { AppError } from '../errors';
import { identityKey } from '../accounts/validate';
import type { GroupColumn, Predicate, UserColumn } from '../store/scim';

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:user:';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:group:';

const USER_ATTRIBUTES: Record<string, UserColumn> = {
  id: 'id',
  username: 'username',
  externalid: 'external_id',
  'emails.value': 'email',
  emails: 'email',
  displayname: 'name',
  'name.formatted': 'name',
  active: 'active',
  'meta.created': 'created',
  'meta.lastmodified': 'modified',
};

const GROUP_ATTRIBUTES: Record<string, GroupColumn> = {
  id: 'id',
  displayname: 'name',
  externalid: 'external_id',
  'meta.created': 'created',
  'meta.lastmodified': 'modified',
};

/** What the one email's sub-attributes always are (for value filters like `[type eq "work"]`). */
const EMAIL_FACTS: Record<string, string | boolean> = { type: 'work', primary: true };

const invalid = (why: string) => new AppError('invalid_input', why, { scimType: 'invalidFilter' });
const unknownPath = (path: string) =>
  new AppError('invalid_input', `the filter names ${path.slice(0, 100)}, which cannot be filtered on`, { scimType: 'invalidPath' });

const TIME_COLUMNS = new Set(['created', 'modified']);

/** A table's own entry, never one its prototype answers (`constructor`, `__proto__`). */
const ownValue = <V>(table: Record<string, V>, key: string): V | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);

function toPredicate<C extends string>(f: Filter, attributes: Record<string, C>, schema: string, prefix = ''): Predicate<C> {
  switch (f.op) {
    case 'and':
    case 'or':
      return { kind: f.op, parts: f.filters.map((x) => toPredicate(x, attributes, schema, prefix)) };
    case 'not':
      return { kind: 'not', part: toPredicate(f.filter, attributes, schema, prefix) };
    case '[]': {
      const outer = f.attrPath.toLowerCase().replace(schema, '');
      if (outer !== 'emails' || attributes !== (USER_ATTRIBUTES as unknown)) throw unknownPath(f.attrPath);
      return toPredicate(f.valFilter, attributes, schema, 'emails.');
    }
    default: {
      const path = prefix + f.attrPath.toLowerCase().replace(schema, '');
      // `emails[type eq "work"]`: type and primary are facts of the one email, not columns.
      const fact = prefix === 'emails.' ? ownValue(EMAIL_FACTS, f.attrPath.toLowerCase()) : undefined;
      if (fact !== undefined) {
        if (f.op === 'pr') return { kind: 'const', value: true };
        const v = typeof f.compValue === 'string' ? f.compValue.toLowerCase() : f.compValue;
        if (f.op === 'eq') return { kind: 'const', value: v === fact };
        if (f.op === 'ne') return { kind: 'const', value: v !== fact };
        throw invalid(`${f.attrPath} is compared only with eq or ne`);
      }
      const column = ownValue(attributes, path);
      if (column === undefined) throw unknownPath(f.attrPath);
      if (f.op === 'pr') return { kind: 'present', column };
      let value = f.compValue;
      if (value === null) throw invalid('a filter compares with null only through pr');
      if (column === ('active' as C)) {
        if (typeof value === 'string' && /^(true|false)$/i.test(value)) value = value.toLowerCase() === 'true';
        if (typeof value !== 'boolean' || (f.op !== 'eq' && f.op !== 'ne')) throw invalid('active is compared with eq or ne and true or false');
      } else if (TIME_COLUMNS.has(column)) {
        const ms = typeof value === 'string' ? Date.parse(value) : NaN;
        if (!Number.isFinite(ms)) throw invalid(`${f.attrPath} is compared with a date and time (2026-01-31T12:00:00Z)`);
        value = ms;
      } else if (typeof value !== 'string') {
        throw invalid(`${f.attrPath} is compared with a string`);
      }
      // Ids are made in lower case; one given in upper case names the same resource (as in a URL or a member's value).
      if (column === ('id' as C) && typeof value === 'string') value = value.toLowerCase();
      // An address's eq is its identity key's: the unique index answers, and look-alikes match as on signin.
      if (column === ('email' as C) && (f.op === 'eq' || f.op === 'ne') && typeof value === 'string')
        return { kind: 'compare', column: 'email_key' as C, op: f.op, value: identityKey(value) };
      return { kind: 'compare', column, op: f.op, value };
    }
  }
}

function parsed(text: string): Filter {
  if (text.length > 2000) throw invalid('the filter is longer than 2,000 characters');
  try {
    return parse(text);
  } catch (err) {
    throw invalid(`the filter is not valid SCIM filter syntax: ${(err as Error).message.slice(0, 200)}`);
  }
}

/** A Users filter as the store runs it; null for no filter. */
export function userFilter(text: string | undefined): Predicate<UserColumn> | null {
  if (text === undefined || text.trim() === '') return null;
  return toPredicate(parsed(text), USER_ATTRIBUTES, USER_SCHEMA);
}

/** A Groups filter as the store runs it; null for no filter. */
export function groupFilter(text: string | undefined): Predicate<GroupColumn> | null {
  if (text === undefined || text.trim() === '') return null;
  return toPredicate(parsed(text), GROUP_ATTRIBUTES, GROUP_SCHEMA);
}
