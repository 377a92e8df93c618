/**
 * The directory tree as LDAP shows it (contract sections 15 and 22): the root DSE, `<base>`,
 * `ou=people` with `uid=<username>` entries and `ou=groups` with `cn=<name>` entries; DNs read
 * as RFC 4514 strings, filters evaluated against multi-valued attributes,
 * case-insensitively, DN-valued attributes compared as normalised DNs. Nesting: a person's
 * memberOf holds every group they are in, directly or not; a group's member holds its direct
 * members, people and groups; the in-chain matching rule asks about any depth.
 */
import { DN } from 'ldapts';
import { OID, type ExtensibleMatch, type LdapFilter } from './protocol';
import type { DirectoryGroup, Person } from '../core';

export type Attributes = ReadonlyArray<[string, readonly string[]]>;
export interface Entry {
  dn: string;
  attributes: Attributes;
  /**
   * A group's: the normalised DNs, among those a search's in-chain member assertions name, of
   * the people and groups inside it at any depth (read with the group, never returned).
   */
  inChain?: ReadonlySet<string>;
}

/** One RDN component: attribute type (lower case) and its value, unescaped. */
type Component = [string, string];

/** Parses an RFC 4514 DN into its RDNs (first = leftmost); null when malformed. Multi-valued RDNs are refused. */
export function parseDn(dn: string): Component[] | null {
  const out: Component[] = [];
  if (dn.trim() === '') return out;
  let i = 0;
  while (i < dn.length) {
    const eq = dn.indexOf('=', i);
    if (eq < 0) return null;
    const type = dn.slice(i, eq).trim().toLowerCase();
    if (!/^[a-z][a-z0-9-]*$|^\d+(\.\d+)*$/.test(type)) return null;
    let value = '';
    let j = eq + 1;
    while (j < dn.length && dn[j] === ' ') j++;
    for (; j < dn.length; j++) {
      const c = dn[j];
      if (c === '\\') {
        const hex = /^[0-9a-fA-F]{2}/.exec(dn.slice(j + 1, j + 3));
        if (hex) {
          // A run of \XX escapes is UTF-8 bytes.
          const bytes: number[] = [];
          while (dn[j] === '\\' && /^[0-9a-fA-F]{2}$/.test(dn.slice(j + 1, j + 3))) {
            bytes.push(parseInt(dn.slice(j + 1, j + 3), 16));
            j += 3;
          }
          value += Buffer.from(bytes).toString('utf8');
          j--;
          continue;
        }
        if (j + 1 >= dn.length) return null;
        value += dn[j + 1];
        j++;
        continue;
      }
      if (c === '+') return null;
      if (c === ',' || c === ';') break;
      value += c;
    }
    out.push([type, value.replace(/\s+$/, '')]);
    i = j + 1;
    if (j >= dn.length) break;
  }
  return out;
}

/**
 * DNs spelled before, and their normal forms: the same group DNs come back in every person's
 * memberOf and in every search, and building one (escaping, parsing) costs more than the rest of
 * a filter's test. Bounded: past the limit the cache starts again.
 */
const CACHED_DNS = 20_000;
const normalDns = new Map<string, string>();
function remember(cache: Map<string, string>, key: string, value: string): void {
  if (cache.size >= CACHED_DNS) cache.clear();
  cache.set(key, value);
}

const rdn = (type: string, value: string) => new DN().addPairRDN(type, value).toString();
/** A DN in one spelling for comparing: types and values lower case, escapes as RDN writes them. */
export const normalDn = (components: readonly Component[]) => components.map(([t, v]) => rdn(t, v.toLowerCase())).join(',');

export class Tree {
  readonly base: string;
  private readonly baseParts: Component[];
  readonly people: string;
  readonly groups: string;

  constructor(baseDn: string) {
    const parts = parseDn(baseDn);
    if (!parts || parts.length === 0) throw new Error(`not a DN: ${baseDn}`);
    this.baseParts = parts;
    this.base = parts.map(([t, v]) => rdn(t, v)).join(',');
    this.people = `ou=people,${this.base}`;
    this.groups = `ou=groups,${this.base}`;
  }

  private readonly personDns = new Map<string, string>();
  personDn = (username: string) => {
    let dn = this.personDns.get(username);
    if (dn === undefined) remember(this.personDns, username, (dn = `${rdn('uid', username)},${this.people}`));
    return dn;
  };
  private readonly groupDns = new Map<string, string>();
  groupDn = (name: string) => {
    let dn = this.groupDns.get(name);
    if (dn === undefined) remember(this.groupDns, name, (dn = `${rdn('cn', name)},${this.groups}`));
    return dn;
  };

  /**
   * Where a DN is: the root DSE, the base, an ou, a person or a group (by name), or outside
   * the tree (null); `unknownUnder` names the deepest known entry above an unknown one.
   */
  locate(dn: string): { at: 'root' | 'base' | 'people' | 'groups' } | { at: 'person' | 'group'; name: string } | { at: 'unknown'; matched: string } | null {
    const parts = parseDn(dn);
    if (parts === null) return null;
    if (parts.length === 0) return { at: 'root' };
    const n = this.baseParts.length;
    if (parts.length < n || normalDn(parts.slice(parts.length - n)) !== normalDn(this.baseParts)) return { at: 'unknown', matched: '' };
    const rest = parts.slice(0, parts.length - n);
    if (rest.length === 0) return { at: 'base' };
    const [ouType, ou] = rest[rest.length - 1];
    const branch = ouType === 'ou' ? ou.toLowerCase() : '';
    if (branch !== 'people' && branch !== 'groups') return { at: 'unknown', matched: this.base };
    if (rest.length === 1) return { at: branch };
    const [type, value] = rest[0];
    if (rest.length === 2 && branch === 'people' && type === 'uid') return { at: 'person', name: value.toLowerCase() };
    if (rest.length === 2 && branch === 'groups' && type === 'cn') return { at: 'group', name: value };
    return { at: 'unknown', matched: branch === 'people' ? this.people : this.groups };
  }

  rootDse(extensions: readonly string[], controls: readonly string[]): Entry {
    return {
      dn: '',
      attributes: [
        ['objectClass', ['top']],
        ['namingContexts', [this.base]],
        ['supportedLDAPVersion', ['3']],
        ['supportedControl', [...controls]],
        ['supportedExtension', [...extensions]],
        ['vendorName', ['Gatehouse']],
      ],
    };
  }

  baseEntry(): Entry {
    const [type, value] = this.baseParts[0];
    return {
      dn: this.base,
      attributes: [
        ['objectClass', ['top', type === 'dc' ? 'domain' : 'organization']],
        [type, [value]],
      ],
    };
  }

  ou(name: 'people' | 'groups'): Entry {
    return {
      dn: name === 'people' ? this.people : this.groups,
      attributes: [
        ['objectClass', ['top', 'organizationalUnit']],
        ['ou', [name]],
      ],
    };
  }

  /**
   * A person: inetOrgPerson, and for a POSIX account (section 25) also posixAccount (RFC 2307:
   * uidNumber, gidNumber of their user-private group, homeDirectory, loginShell, gecos) and, with
   * SSH keys, ldapPublicKey (sshPublicKey, as sss_ssh_authorizedkeys reads it).
   */
  person(p: Person): Entry {
    const sn = p.name.trim().split(/\s+/).pop() || p.username;
    const x = p.posix;
    const keys = x && p.ssh_keys.length > 0;
    const classes = ['top', 'person', 'organizationalPerson', 'inetOrgPerson', ...(x ? ['posixAccount'] : []), ...(keys ? ['ldapPublicKey'] : [])];
    const attributes: Array<[string, readonly string[]]> = [
      ['objectClass', classes],
      ['uid', [p.username]],
      ['cn', [p.name]],
      ['displayName', [p.name]],
      ['sn', [sn]],
      ['mail', [p.email]],
      ['memberOf', p.groups.map((g) => this.groupDn(g))],
    ];
    if (x)
      attributes.push(
        ['uidNumber', [String(x.uidNumber)]],
        ['gidNumber', [String(x.gidNumber)]],
        ['homeDirectory', [x.homeDirectory]],
        ['loginShell', [x.loginShell]],
        ['gecos', [gecos(p.name)]],
      );
    if (keys) attributes.push(['sshPublicKey', p.ssh_keys]);
    attributes.push(['entryUUID', [p.reference_id]], ['createTimestamp', [generalizedTime(p.created_at)]]);
    return { dn: this.personDn(p.username), attributes };
  }

  /**
   * A group: its direct members, people then groups, in member and uniqueMember (Apache's
   * sub-group search and apps that follow nesting themselves read groups there). No memberOf:
   * filters apps use to list their people, such as (memberOf=cn=media,…) from the base, find
   * people only; the groups a group is inside are asked with the in-chain rule on member.
   */
  group(g: DirectoryGroup): Entry {
    const members = [...g.members.map((u) => this.personDn(u)), ...g.memberGroups.map((n) => this.groupDn(n))];
    const inChain = new Set([...g.chain.people.map((u) => this.personDn(u)), ...g.chain.groups.map((n) => this.groupDn(n))].map(dnKey));
    return {
      dn: this.groupDn(g.name),
      attributes: [
        ['objectClass', ['top', 'groupOfNames', 'groupOfUniqueNames', ...(g.posix_id === null ? [] : ['posixGroup'])]],
        ['cn', [g.name]],
        ['member', members],
        ['uniqueMember', members],
        ...(g.posix_id === null ? [] : [['gidNumber', [String(g.posix_id)]] as [string, readonly string[]]]),
        ['memberUid', g.uids],
        ['entryUUID', [g.reference_id]],
      ],
      inChain,
    };
  }
}

/** gecos (a string of the IA5 set, read by passwd(5) as fields split by commas and colons): the name, with those and control characters left out. */
const gecos = (name: string) => name.replace(/[,:\p{Cc}]/gu, ' ').trim();

const generalizedTime = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/** Attributes whose values are DNs: compared as normalised DNs. */
const DN_VALUED = new Set(['member', 'uniquemember', 'memberof', 'namingcontexts']);
/** Operational attributes: returned when named or with `+`, not with `*`. */
const OPERATIONAL = new Set(['entryuuid', 'createtimestamp']);
/** Attributes whose values are integers: ordered as numbers (uidNumber>=10000). */
export const INTEGER_VALUED = new Set(['uidnumber', 'gidnumber']);

export const valuesOf = (e: Entry, type: string) => {
  const t = type.toLowerCase();
  return e.attributes.find(([name]) => name.toLowerCase() === t)?.[1] ?? [];
};

export const normalValue = (type: string, v: string) => {
  if (!DN_VALUED.has(type.toLowerCase())) return v.toLowerCase();
  let n = normalDns.get(v);
  if (n === undefined) {
    const parts = parseDn(v);
    n = parts ? normalDn(parts) : v.toLowerCase();
    remember(normalDns, v, n);
  }
  return n;
};
const dnKey = (dn: string) => normalValue('member', dn);

export const MEMBER_ATTRIBUTES = new Set(['member', 'uniquemember']);

/** An extensible match with the in-chain rule on an attribute it applies to: which, else null. */
export function inChainOn(x: ExtensibleMatch): 'memberof' | 'member' | null {
  if (x.rule !== OID.inChain || x.attribute === null) return null;
  const a = x.attribute.toLowerCase();
  if (a === 'memberof') return 'memberof';
  return MEMBER_ATTRIBUTES.has(a) ? 'member' : null;
}

/** Whether the filter asserts anything about an attribute in `names` (lower case), `skip` aside. */
function mentions(f: LdapFilter, names: ReadonlySet<string>, skip: LdapFilter | null): boolean {
  if (f === skip) return false;
  if ('and' in f) return f.and.some((g) => mentions(g, names, skip));
  if ('or' in f) return f.or.some((g) => mentions(g, names, skip));
  if ('not' in f) return mentions(f.not, names, skip);
  if ('present' in f) return names.has(f.present.toLowerCase());
  if ('compare' in f) return names.has(f.attribute.toLowerCase());
  if ('substring' in f) return names.has(f.substring.attribute.toLowerCase());
  if (inChainOn(f.extensible) === 'member') return false; // answered by the chain read, not the member lists
  return f.extensible.attribute === null || names.has(f.extensible.attribute.toLowerCase());
}

/** The people (usernames) and groups (names) the filter's in-chain member assertions name, wherever they are. */
export function chainOf(f: LdapFilter, tree: Tree): { people: string[]; groups: string[] } {
  const out = { people: new Set<string>(), groups: new Set<string>() };
  const walk = (g: LdapFilter): void => {
    if ('and' in g) return g.and.forEach(walk);
    if ('or' in g) return g.or.forEach(walk);
    if ('not' in g) return walk(g.not);
    if (!('extensible' in g) || inChainOn(g.extensible) !== 'member') return;
    const at = tree.locate(g.extensible.value);
    if (at?.at === 'person') out.people.add(at.name);
    if (at?.at === 'group') out.groups.add(at.name.toLowerCase());
  };
  walk(f);
  return { people: [...out.people], groups: [...out.groups] };
}

/** What a group read narrows to (see the store's GroupQuery), and who its in-chain assertions ask about. */
export interface GroupsHint {
  name?: string;
  member?: string;
  memberGroup?: string;
  deep?: boolean;
  posixId?: number;
  members: boolean;
  chain: { people: string[]; groups: string[] };
  uids: boolean;
}

/** A POSIX number as a filter asserts it, or undefined when it is none (then the filter answers, unnarrowed). */
const posixNumber = (v: string) => (/^[1-9]\d{0,14}$/.test(v.trim()) ? Number(v.trim()) : undefined);

/**
 * What a group search narrows to before reading: an equality on cn, and an equality on member or
 * uniqueMember, or the in-chain rule on them (`deep`), naming a person or a group, at the top of
 * the filter or in a top-level AND. `members` says whether the member lists must be read whole:
 * not when the answer does not return them and the filter asks about members only through the
 * narrowing assertion (which the read checks). `chain`: every value an in-chain member assertion
 * names, wherever it is in the filter, so each group read says which of them are inside it.
 */
export function groupsHint(f: LdapFilter, attributes: readonly string[], tree: Tree): GroupsHint {
  const hint: Omit<GroupsHint, 'members' | 'chain' | 'uids'> = {};
  let by: LdapFilter | null = null;
  for (const p of 'and' in f ? f.and : [f]) {
    let value: string | null = null;
    let deep = false;
    if ('compare' in p && p.compare === 'eq') {
      const a = p.attribute.toLowerCase();
      if (a === 'cn' && hint.name === undefined) hint.name = p.value.toLowerCase();
      if (a === 'gidnumber' && hint.posixId === undefined) hint.posixId = posixNumber(p.value) ?? -1;
      if (MEMBER_ATTRIBUTES.has(a)) value = p.value;
      // memberUid lists everyone inside at any depth: the groups a person is in at any depth.
      if (a === 'memberuid' && by === null) {
        hint.member = p.value.toLowerCase();
        hint.deep = true;
        by = p;
        continue;
      }
    }
    if ('extensible' in p && inChainOn(p.extensible) === 'member') {
      deep = true;
      value = p.extensible.value;
    }
    if (value === null || by !== null) continue;
    const at = tree.locate(value);
    if (at?.at === 'person') hint.member = at.name;
    else if (at?.at === 'group') hint.memberGroup = at.name;
    else continue; // not an entry here: no narrowing, the filter answers
    hint.deep = deep;
    by = p;
  }
  const asked = attributes.map((a) => a.toLowerCase());
  const all = asked.length === 0 || asked.includes('*');
  const returned = all || asked.some((a) => MEMBER_ATTRIBUTES.has(a));
  const uids = all || asked.includes('memberuid') || mentions(f, MEMBER_UID, null);
  return { ...hint, members: returned || mentions(f, MEMBER_ATTRIBUTES, by), chain: chainOf(f, tree), uids };
}

const MEMBER_UID: ReadonlySet<string> = new Set(['memberuid']);

/**
 * What a search narrows to before reading: an equality on uid, mail or entryUUID at the top of
 * the filter or in a top-level AND lets the directory read one person by index; on memberOf (or
 * the in-chain rule on it, the same thing here), the members of that group at any depth.
 */
export function peopleHint(f: LdapFilter, tree: Tree): { username?: string; email?: string; referenceId?: string; group?: string; posixId?: number } {
  let inGroup: string | undefined;
  for (const p of 'and' in f ? f.and : [f]) {
    let memberOf: string | null = null;
    if ('compare' in p && p.compare === 'eq') {
      const value = p.value.toLowerCase();
      const a = p.attribute.toLowerCase();
      if (a === 'uid') return { username: value };
      if (a === 'mail') return { email: value };
      if (a === 'entryuuid') return { referenceId: value };
      // A number that is none (0, text) finds nobody: -1 is no one's.
      if (a === 'uidnumber' || a === 'gidnumber') return { posixId: posixNumber(value) ?? -1 };
      if (a === 'memberof') memberOf = p.value;
    }
    if ('extensible' in p && inChainOn(p.extensible) === 'memberof') memberOf = p.extensible.value;
    if (memberOf !== null && inGroup === undefined) {
      // Jellyfin's (memberOf=cn=media,ou=groups,…): the members of one group, not everyone.
      const at = tree.locate(memberOf);
      if (at?.at === 'group') inGroup = at.name;
    }
  }
  return inGroup === undefined ? {} : { group: inGroup };
}

/** The attributes a search asked for: `*` (or none) the user attributes, `+` the operational, `1.1` none. */
export function select(e: Entry, requested: readonly string[], typesOnly: boolean): Attributes {
  const asked = requested.map((a) => a.toLowerCase());
  const all = asked.length === 0 || asked.includes('*');
  const operational = asked.includes('+');
  const out: Array<[string, readonly string[]]> = [];
  for (const [name, values] of e.attributes) {
    const n = name.toLowerCase();
    const wanted = asked.includes(n) || (OPERATIONAL.has(n) ? operational : all);
    if (!wanted || (asked.length === 1 && asked[0] === '1.1')) continue;
    if (values.length === 0) continue;
    out.push([name, typesOnly ? [] : values]);
  }
  return out;
}
