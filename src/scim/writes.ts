/**
 * SCIM writes (RFC 7644 sections 3.3 to 3.6) as contract section 19 maps them: a User or Group
 * body read into what Gatehouse keeps; a PATCH applied by scim-patch to the resource as Gatehouse
 * answers it, the result then written as a PUT would be (scim/operations.ts checks `If-Match`
 * in the write's transaction: store/conditional.ts). Attribute names are case-insensitive. Attributes of the core and enterprise
 * schemas that Gatehouse does not keep are accepted and ignored; anything else is refused.
 */
/* eslint-disable @typescript-eslint/no-require-imports */
import { AppError } from '../errors';
import { normalizeEmail, showsSomething, validateName } from '../accounts/validate';
import { parseUsername } from '../accounts/usernames';
import { parseSentGroupName } from '../groups/manage';
import { type Json, SCHEMAS } from './resources';
import { isPrototypeKey } from '../plain-json';

const invalid = (message: string, scimType = 'invalidValue') => new AppError('invalid_input', message, { scimType });

/** Core User attributes (RFC 7643 section 4.1) Gatehouse does not keep: accepted, ignored. */
const IGNORED_USER = new Set([
  'nickname',
  'profileurl',
  'title',
  'usertype',
  'preferredlanguage',
  'locale',
  'timezone',
  'password',
  'phonenumbers',
  'ims',
  'photos',
  'addresses',
  'entitlements',
  'roles',
  'x509certificates',
]);

interface Shape {
  /** The schema URNs a body of this resource may name. */
  schemas: readonly string[];
  /** Attributes kept and written. */
  kept: ReadonlySet<string>;
  /** Attributes accepted and ignored. */
  ignored: ReadonlySet<string>;
  /** Attributes the server sets: ignored in a POST or PUT body, refused as a PATCH target (mutability). */
  readOnly: ReadonlySet<string>;
  /** The sub-attributes a PATCH path may name, by complex attribute; a kept attribute not here has none. */
  subs: ReadonlyMap<string, ReadonlySet<string>>;
  /** Each name a resource is answered with (attributes, sub-attributes), by its lower case. */
  spelling: ReadonlyMap<string, string>;
}

/** Names as resources spell them, by their lower case. */
const spelled = (...names: string[]): ReadonlyMap<string, string> => new Map(names.map((n) => [n.toLowerCase(), n]));

const USER: Shape = {
  schemas: [SCHEMAS.user, SCHEMAS.enterprise],
  kept: new Set(['username', 'name', 'displayname', 'emails', 'active', 'externalid']),
  ignored: IGNORED_USER,
  readOnly: new Set(['id', 'meta', 'groups', 'schemas']),
  subs: new Map([
    ['name', new Set(['formatted', 'familyname', 'givenname', 'middlename', 'honorificprefix', 'honorificsuffix'])],
    ['emails', new Set(['value', 'type', 'primary', 'display'])],
  ]),
  spelling: spelled(
    ...['userName', 'name', 'displayName', 'emails', 'active', 'externalId', 'id', 'meta', 'groups', 'schemas'],
    ...['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix', 'value', 'type', 'primary', 'display'],
  ),
};

const GROUP: Shape = {
  schemas: [SCHEMAS.group],
  kept: new Set(['displayname', 'members', 'externalid']),
  ignored: new Set(),
  readOnly: new Set(['id', 'meta', 'schemas']),
  subs: new Map([['members', new Set(['value', 'display', 'type', '$ref'])]]),
  spelling: spelled('displayName', 'members', 'externalId', 'id', 'meta', 'schemas', 'value', 'display', 'type', '$ref'),
};

/** A body's top-level keys checked against the shape: the URN of a schema it does not know is refused. */
function checkBody(body: Json, shape: Shape): void {
  const schemas = body.schemas;
  if (schemas !== undefined) {
    if (!Array.isArray(schemas) || schemas.some((s) => typeof s !== 'string')) throw invalid('schemas must be an array of schema URNs');
    for (const urn of schemas as string[]) {
      if (!shape.schemas.some((known) => known.toLowerCase() === urn.toLowerCase())) throw invalid(`unknown schema ${urn.slice(0, 100)}`);
    }
  }
  oneKeyEach(body, 'the body');
  for (const key of Object.keys(body)) {
    const k = key.toLowerCase();
    if (k.startsWith('urn:')) {
      if (!shape.schemas.some((known) => known.toLowerCase() === k)) throw invalid(`unknown schema ${key.slice(0, 100)}`);
      continue;
    }
    if (!shape.kept.has(k) && !shape.ignored.has(k) && !shape.readOnly.has(k)) throw invalid(`unknown attribute ${key.slice(0, 60)}`);
  }
}

/**
 * An attribute by name, whatever its case (scim/search.ts reads a SearchRequest with it too). Two
 * keys that differ only by case (`value` and `VALUE`) name one attribute twice: which one counts
 * would be a guess, so the body is refused.
 */
export function get(body: Json, name: string): unknown {
  const lower = name.toLowerCase();
  let found: [string, unknown] | undefined;
  for (const [key, value] of Object.entries(body)) {
    if (key.toLowerCase() !== lower) continue;
    if (found) throw invalid(`${found[0].slice(0, 60)} and ${key.slice(0, 60)} name the same attribute (names are case-insensitive): give it once`);
    found = [key, value];
  }
  return found?.[1];
}

/** Refuses an object whose keys name one attribute twice, differing only by case (`where` names the object). */
function oneKeyEach(object: Json, where: string): void {
  const seen = new Map<string, string>();
  for (const key of Object.keys(object)) {
    const twin = seen.get(key.toLowerCase());
    if (twin !== undefined)
      throw invalid(`${where}: ${twin.slice(0, 60)} and ${key.slice(0, 60)} name the same attribute (names are case-insensitive): give it once`);
    seen.set(key.toLowerCase(), key);
  }
}

/** A boolean as clients send it: true/false, or Entra ID's "True"/"False". */
function bool(value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalid(`${name} must be true or false`);
}

const optionalString = (value: unknown, name: string, max: number): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > max) throw invalid(`${name} must be a string of at most ${max} characters`);
  return value.trim() === '' ? undefined : value.trim();
};

/** What Gatehouse keeps of a User. */
export interface UserInput {
  username: string;
  email: { email: string; key: string };
  name: string;
  externalId: string | null;
  active: boolean;
}

/** The primary email (else a work one, else the first); an email-shaped userName when there is none. */
function emailOf(body: Json, username: string): { email: string; key: string } {
  const emails = get(body, 'emails');
  if (emails !== undefined && emails !== null && !Array.isArray(emails)) throw invalid('emails must be an array');
  const list = ((emails as unknown[] | undefined) ?? []).map((e, i) => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw invalid(`emails[${i}] must be an object`);
    return e as Json;
  });
  const primary =
    list.find((e) => get(e, 'primary') !== undefined && bool(get(e, 'primary'), 'emails.primary')) ??
    list.find((e) => String(get(e, 'type') ?? '').toLowerCase() === 'work') ??
    list[0];
  const value = primary === undefined ? (username.includes('@') ? username : undefined) : get(primary, 'value');
  if (typeof value !== 'string' || value.trim() === '') throw invalid('a User needs an email: emails[].value (or an email as its userName)');
  try {
    return normalizeEmail(value);
  } catch (err) {
    throw invalid(`emails: ${(err as Error).message}`);
  }
}

/**
 * The name: displayName, else name.formatted, else givenName and familyName, else the userName's
 * part before any @.
 * `current`: the name as stored (a PATCH): the first of these that differs from it is the new one.
 */
function nameOf(body: Json, username: string, current?: string): string {
  const name = get(body, 'name');
  if (name !== undefined && name !== null && (typeof name !== 'object' || Array.isArray(name))) throw invalid('name must be an object');
  const n = (name ?? {}) as Json;
  const joined = [optionalString(get(n, 'givenName'), 'name.givenName', 100), optionalString(get(n, 'familyName'), 'name.familyName', 100)]
    .filter(Boolean)
    .join(' ');
  const given = [optionalString(get(body, 'displayName'), 'displayName', 100), optionalString(get(n, 'formatted'), 'name.formatted', 100), joined || undefined];
  try {
    // Names another system sends lose their hidden characters (bidi overrides, zero-width
    // spaces) rather than failing the provisioning of the person: accounts/validate.ts.
    const candidates = given.filter((c): c is string => c !== undefined && showsSomething(c)).map((c) => validateName(c, 'sent'));
    const chosen = current === undefined ? (candidates[0] ?? username.split('@')[0].slice(0, 100)) : (candidates.find((c) => c !== current) ?? current);
    return validateName(chosen, 'sent');
  } catch (err) {
    throw invalid(`name: ${(err as Error).message}`);
  }
}

/** A User body (POST, PUT, or a patched resource) as Gatehouse keeps it. */
export function parseUser(body: Json, currentName?: string): UserInput {
  checkBody(body, USER);
  const rawUsername = get(body, 'userName');
  if (rawUsername === undefined || rawUsername === null || rawUsername === '') throw invalid('userName is required');
  let username: string;
  try {
    username = parseUsername(rawUsername);
  } catch {
    throw invalid('userName is 1 to 128 characters: letters, digits, . _ + - and one @');
  }
  const active = get(body, 'active');
  return {
    username,
    email: emailOf(body, username),
    name: nameOf(body, username, currentName),
    externalId: optionalString(get(body, 'externalId'), 'externalId', 256) ?? null,
    active: active === undefined || active === null ? true : bool(active, 'active'),
  };
}

/**
 * A member as a body names it: an id, and the resource type its `$ref` names (null: no `$ref`; the
 * store tells). Its `type` is not kept: RFC 7643 section 4.2 calls it "a label indicating the type
 * of resource", and clients label carelessly (python-scim's tester picks User or Group at random
 * for a member whose `$ref` is a User), so the id and the `$ref` decide.
 */
export interface MemberInput {
  id: string;
  ref: 'User' | 'Group' | null;
}

/** What Gatehouse keeps of a Group: its name and its members (people and groups) by reference id. */
export interface GroupInput {
  name: string;
  members: MemberInput[];
  externalId: string | null;
}

const MEMBER_ID = 64;
/** A member's `$ref`, absolute or relative: its path ends in /Users/<id> or /Groups/<id>. */
const REF_PATH = /\/(Users|Groups)\/([^/]+)\/?$/i;

/** The resource a member's `$ref` names, or null when it has none. */
function refOf(raw: unknown, i: number): { kind: 'User' | 'Group'; id: string } | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const refused = () => invalid(`members[${i}].$ref must be a URL ending in /Users/<id> or /Groups/<id>`);
  if (typeof raw !== 'string' || raw.length > 2048) throw refused();
  let match: RegExpExecArray | null;
  let id: string;
  try {
    // The base only lets a relative $ref (Users/<id>) parse; the path is all that is read.
    match = REF_PATH.exec(new URL(raw, 'http://relative.invalid/').pathname);
    id = decodeURIComponent(match?.[2] ?? '');
  } catch {
    throw refused();
  }
  if (!match || id === '' || id.length > MEMBER_ID) throw refused();
  return { kind: match[1].toLowerCase() === 'users' ? 'User' : 'Group', id: id.toLowerCase() };
}

/** What a member may say (RFC 7643 section 4.2), in any case. */
const MEMBER_KEYS = GROUP.subs.get('members')!;

/**
 * One member of a body: its id from `value`, else from `$ref`; the two must name the same id. A
 * key it cannot have (`bogus`, `"value "`) or one given twice in two cases is refused: a member
 * must not read as one id to Gatehouse and another to whoever wrote it.
 */
function memberOf(m: unknown, i: number): MemberInput {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) throw invalid(`members[${i}] must be an object`);
  oneKeyEach(m as Json, `members[${i}]`);
  for (const key of Object.keys(m)) {
    if (!MEMBER_KEYS.has(key.toLowerCase()))
      throw invalid(`members[${i}] has no sub-attribute ${JSON.stringify(key.slice(0, 60))}: a member has value, $ref, type and display`);
  }
  const type = get(m as Json, 'type');
  if (type !== undefined && type !== null && (typeof type !== 'string' || !/^(user|group)$/i.test(type))) {
    throw invalid(`members[${i}].type is User or Group`);
  }
  const ref = refOf(get(m as Json, '$ref'), i);
  const value = get(m as Json, 'value');
  if (value === undefined || value === null) {
    if (ref === null) throw invalid(`members[${i}] names no member: give its value (a User or Group id) or its $ref`);
    return { id: ref.id, ref: ref.kind };
  }
  if (typeof value !== 'string' || value === '' || value.length > MEMBER_ID) throw invalid(`members[${i}].value must be a User or Group id`);
  const id = value.toLowerCase();
  if (ref !== null && ref.id !== id) throw invalid(`members[${i}]: its $ref names the ${ref.kind} ${ref.id} but its value is ${value}`);
  return { id, ref: ref?.kind ?? null };
}

export function parseGroup(body: Json): GroupInput {
  checkBody(body, GROUP);
  let name: string;
  try {
    name = parseSentGroupName(get(body, 'displayName'));
  } catch (err) {
    throw invalid(`displayName: ${(err as Error).message.replace(/^name /, '')}`);
  }
  const members = get(body, 'members') ?? [];
  if (!Array.isArray(members)) throw invalid('members must be an array');
  const byId = new Map<string, MemberInput>();
  for (const [i, m] of members.entries()) {
    const member = memberOf(m, i);
    const seen = byId.get(member.id);
    if (seen?.ref && member.ref && seen.ref !== member.ref) throw invalid(`members: the $refs name ${member.id} both a User and a Group`);
    byId.set(member.id, { id: member.id, ref: seen?.ref ?? member.ref });
  }
  return { name, members: [...byId.values()], externalId: optionalString(get(body, 'externalId'), 'externalId', 256) ?? null };
}

const PATCH_OPS = new Set(['add', 'remove', 'replace']);
const MAX_OPERATIONS = 1000;

/**
 * The attribute a PATCH path starts at (lower case, the core schema's URN taken off), or null for
 * the enterprise extension. A path any of whose names (outside quoted values) is a prototype key
 * (`name.__proto__.x`, `emails[constructor eq 1]`) is refused: the patch library follows paths
 * through plain objects.
 */
function pathRoot(path: string, shape: Shape): string | null {
  const names = path.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/[A-Za-z_$][\w$]*/g) ?? [];
  if (names.some(isPrototypeKey)) throw invalid(`not an attribute path: ${path.slice(0, 100)}`, 'invalidPath');
  let p = path.trim();
  const lower = p.toLowerCase();
  for (const urn of shape.schemas) {
    const u = urn.toLowerCase();
    if (lower === u || lower.startsWith(`${u}:`)) {
      if (u !== shape.schemas[0].toLowerCase()) return null;
      p = p.slice(u.length + 1);
    }
  }
  if (p.toLowerCase().startsWith('urn:')) throw invalid(`unknown schema in path ${path.slice(0, 100)}`, 'invalidPath');
  const m = /^([A-Za-z$][\w$-]*)/.exec(p);
  if (!m) throw invalid(`not an attribute path: ${path.slice(0, 100)}`, 'invalidPath');
  const root = m[1].toLowerCase();
  // A sub-attribute (`name.givenName`, `emails[type eq "work"].value`) must be one the schema has.
  const after = p.slice(m[0].length).replace(/^\[(?:"(?:[^"\\]|\\.)*"|[^\]"])*\]/, '');
  const named = /^\.([A-Za-z$][\w$-]*)$/.exec(after)?.[1]?.toLowerCase();
  if (named !== undefined && shape.kept.has(root) && !shape.subs.get(root)?.has(named)) {
    throw invalid(`${root} has no sub-attribute ${named.slice(0, 60)}`, 'invalidPath');
  }
  return root;
}

/**
 * Ids compare without case, as everywhere in SCIM here (a member's `value` and a URL's id are
 * read in lower case, the case Gatehouse makes them in): the quoted values a members path
 * compares with `value` (`members[value eq "ABC…"]`) are lower-cased before scim-patch, which
 * compares exactly, reads them. Other sub-attributes' values (display) are left as given.
 */
function lowerMemberValues(path: string): string {
  // Odd parts are the quoted strings; each is lower-cased when the text before it ends in `value <op>`.
  const parts = path.split(/("(?:[^"\\]|\\.)*")/);
  return parts.map((part, i) => (i % 2 === 1 && /(?:^|[\s[(.])value\s+[a-z]{2}\s*$/i.test(parts[i - 1]) ? part.toLowerCase() : part)).join('');
}

/** Dotted keys of a path-less value (`"name.givenName": "Ann"`, as Entra ID sends them) as nested objects. */
function nest(value: Json): Json {
  const out: Json = {};
  for (const [key, v] of Object.entries(value)) {
    const dot = key.indexOf('.');
    if (dot < 0 || key.toLowerCase().startsWith('urn:')) {
      out[key] = v;
      continue;
    }
    const head = key.slice(0, dot);
    const inner = (out[head] && typeof out[head] === 'object' ? out[head] : {}) as Json;
    inner[key.slice(dot + 1)] = v;
    out[head] = inner;
  }
  return out;
}

/**
 * A PATCH's names spelt as the resource spells them. Names are case-insensitive, but scim-patch
 * matches them exactly: `"path": "Members"` would make a second attribute beside `members`, read
 * by no one. So every name outside quotes in a path, and every key of a value (at any depth), is
 * written in the resource's case first; a value holding one name twice in two cases is refused
 * before the two could become one.
 */
function spelledPath(path: string, shape: Shape): string {
  const parts = path.split(/("(?:[^"\\]|\\.)*")/);
  return parts.map((part, i) => (i % 2 === 1 ? part : part.replace(/[A-Za-z$][\w$]*/g, (w) => shape.spelling.get(w.toLowerCase()) ?? w))).join('');
}

function spelledValue(value: unknown, shape: Shape, where: string): unknown {
  if (Array.isArray(value)) return value.map((v, i) => spelledValue(v, shape, `${where}[${i}]`));
  if (value === null || typeof value !== 'object') return value;
  oneKeyEach(value as Json, where);
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key.toLowerCase().startsWith('urn:') ? key : (shape.spelling.get(key.toLowerCase()) ?? key),
      spelledValue(v, shape, where),
    ]),
  );
}

/** A PatchOp operation as scim-patch takes it. */
interface Operation {
  op: 'add' | 'remove' | 'replace';
  path?: string;
  value?: unknown;
}

/** The operations of a PatchOp body, checked: what Gatehouse does not keep is dropped, read-only targets refused. */
function operationsOf(body: Json, shape: Shape, resource: Json): Operation[] {
  const schemas = get(body, 'schemas');
  if (schemas !== undefined && (!Array.isArray(schemas) || !schemas.some((s) => String(s).toLowerCase() === SCHEMAS.patch.toLowerCase()))) {
    throw invalid(`a PATCH body names the schema ${SCHEMAS.patch}`);
  }
  const list = get(body, 'Operations');
  if (!Array.isArray(list) || list.length === 0) throw invalid('Operations must be a non-empty array');
  if (list.length > MAX_OPERATIONS) throw invalid(`at most ${MAX_OPERATIONS} operations in one PATCH`, 'tooMany');
  const out: Operation[] = [];
  for (const [i, raw] of list.entries()) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(`Operations[${i}] must be an object`);
    const o = raw as Json;
    const op = typeof get(o, 'op') === 'string' ? String(get(o, 'op')).toLowerCase() : '';
    if (!PATCH_OPS.has(op)) throw invalid(`Operations[${i}].op must be add, remove or replace`);
    const path = get(o, 'path');
    let value = spelledValue(get(o, 'value'), shape, `Operations[${i}].value`);
    if (path !== undefined && path !== null && path !== '') {
      if (typeof path !== 'string' || path.length > 500) throw invalid(`Operations[${i}].path must be an attribute path`, 'invalidPath');
      const root = pathRoot(path, shape);
      if (root === null || shape.ignored.has(root)) continue;
      if (shape.readOnly.has(root)) throw invalid(`${root} cannot be changed`, 'mutability');
      if (!shape.kept.has(root)) throw invalid(`unknown attribute ${root}`, 'invalidPath');
      if (root === 'active' && op !== 'remove') value = bool(value, 'active');
      // Entra ID removes members by listing them: each becomes a remove by value filter.
      if (op === 'remove' && root === 'members' && path.trim().toLowerCase() === 'members' && Array.isArray(value)) {
        for (const [j, m] of value.entries()) {
          // Named as in a body (value, or $ref), so a $ref that names another id is refused here too.
          const { id } = memberOf(m, j);
          if (!/^[\w.@+-]{1,64}$/.test(id)) throw invalid(`Operations[${i}].value lists members by their User or Group id`);
          out.push({ op: 'remove', path: `members[value eq "${id}"]` });
        }
        continue;
      }
      const target = spelledPath(root === 'members' ? lowerMemberValues(path) : path, shape);
      out.push({ op: op as Operation['op'], path: target, ...(op === 'remove' && value === undefined ? {} : { value }) });
      continue;
    }
    if (op === 'remove') throw invalid(`Operations[${i}]: remove needs a path`, 'noTarget');
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(`Operations[${i}].value must be an object when there is no path`);
    const kept: Json = {};
    for (const [key, v] of Object.entries(spelledValue(nest(value as Json), shape, `Operations[${i}].value`) as Json)) {
      const k = key.toLowerCase();
      if (k.startsWith('urn:') || shape.ignored.has(k)) {
        if (k.startsWith('urn:') && !shape.schemas.some((u) => u.toLowerCase() === k)) throw invalid(`unknown schema ${key.slice(0, 100)}`);
        continue;
      }
      if (shape.readOnly.has(k)) {
        // Entra ID repeats the id in a replace: the same value changes nothing.
        if (JSON.stringify(v) === JSON.stringify(get(resource, key))) continue;
        throw invalid(`${key} cannot be changed`, 'mutability');
      }
      if (!shape.kept.has(k)) throw invalid(`unknown attribute ${key.slice(0, 60)}`, 'invalidPath');
      kept[key] = k === 'active' ? bool(v, 'active') : v;
    }
    if (Object.keys(kept).length > 0) out.push({ op: op as Operation['op'], value: kept });
  }
  return out;
}

interface ScimPatchModule {
  scimPatch<T>(resource: T, operations: Operation[], options?: { mutateDocument?: boolean; treatMissingAsAdd?: boolean }): T;
  ScimError: new (...args: never[]) => Error & { scimCode?: string };
}

/**
 * A User as a PATCH sees it: its name also as givenName and familyName (split at the last space),
 * so that replacing one part keeps the other. Gatehouse keeps one name; answers carry no parts.
 */
function withNameParts(resource: Json): Json {
  const name = resource.name as Json | undefined;
  const formatted = typeof name?.formatted === 'string' ? name.formatted : '';
  const cut = formatted.lastIndexOf(' ');
  const parts = cut > 0 ? { givenName: formatted.slice(0, cut), familyName: formatted.slice(cut + 1) } : { givenName: formatted };
  return { ...resource, name: { ...name, ...parts } };
}

/** The resource with a PatchOp body applied (scim-patch, loaded at the first PATCH). */
export function applyPatch(resource: Json, body: Json, kind: 'User' | 'Group'): Json {
  const operations = operationsOf(body, kind === 'User' ? USER : GROUP, resource);
  if (operations.length === 0) return resource;
  const lib = require('scim-patch') as ScimPatchModule;
  try {
    const start = kind === 'User' ? withNameParts(resource) : structuredClone(resource);
    return lib.scimPatch(start, operations, { mutateDocument: true, treatMissingAsAdd: true });
  } catch (err) {
    if (err instanceof lib.ScimError) {
      const reason = err.scimCode && /^(invalidFilter|invalidPath|invalidValue|noTarget|mutability)$/.test(err.scimCode) ? err.scimCode : 'invalidValue';
      throw invalid(`the PATCH does not apply: ${err.message.slice(0, 200)}`, reason);
    }
    throw err;
  }
}
