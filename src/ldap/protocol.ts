/**
 * LDAPv3 on the wire (RFC 4511), on `ldapts`'s BER reader and writer and its request and filter
 * parsers: framing a byte stream into messages (one SEQUENCE each, at most MAX_MESSAGE bytes),
 * decoding requests, and writing the responses. No BER is written by hand: every tag and length
 * goes through BerWriter and BerReader. Search requests and their filters are read here with
 * BerReader rather than ldapts's SearchRequest: its filter parser is made for a client's own
 * filters and misreads a presence filter inside a request ((objectClass=*) comes out garbled).
 */
import { Attribute, BerReader, BerWriter, BindRequest, CompareRequest, ExtendedRequest, PagedResultsControl, type Control } from 'ldapts';

/** A message larger than this closes the connection (a directory request is a few hundred bytes). */
export const MAX_MESSAGE = 1024 * 1024;

export const OP = {
  bindRequest: 0x60,
  bindResponse: 0x61,
  unbindRequest: 0x42,
  searchRequest: 0x63,
  searchEntry: 0x64,
  searchDone: 0x65,
  modifyRequest: 0x66,
  modifyResponse: 0x67,
  addRequest: 0x68,
  addResponse: 0x69,
  deleteRequest: 0x4a,
  deleteResponse: 0x6b,
  modifyDnRequest: 0x6c,
  modifyDnResponse: 0x6d,
  compareRequest: 0x6e,
  compareResponse: 0x6f,
  abandonRequest: 0x50,
  extendedRequest: 0x77,
  extendedResponse: 0x78,
} as const;

export const RESULT = {
  success: 0,
  operationsError: 1,
  protocolError: 2,
  timeLimitExceeded: 3,
  sizeLimitExceeded: 4,
  compareFalse: 5,
  compareTrue: 6,
  authMethodNotSupported: 7,
  strongerAuthRequired: 8,
  adminLimitExceeded: 11,
  unavailableCriticalExtension: 12,
  confidentialityRequired: 13,
  noSuchObject: 32,
  noSuchAttribute: 16,
  invalidDNSyntax: 34,
  invalidCredentials: 49,
  insufficientAccessRights: 50,
  busy: 51,
  unavailable: 52,
  unwillingToPerform: 53,
  other: 80,
} as const;

export const OID = {
  whoAmI: '1.3.6.1.4.1.4203.1.11.3',
  startTls: '1.3.6.1.4.1.1466.20037',
  pagedResults: '1.2.840.113556.1.4.319',
  noticeOfDisconnection: '1.3.6.1.4.1.1466.20036',
  /** LDAP_MATCHING_RULE_IN_CHAIN (Active Directory's): membership at any depth, in memberOf and member filters. */
  inChain: '1.2.840.113556.1.4.1941',
} as const;

export type Frame = { message: Buffer; rest: Buffer } | { incomplete: true } | { error: string };

/** The next whole message in `buffer` (at most `max` bytes), or that more bytes are needed, or why the stream is broken. */
export function frame(buffer: Buffer, max = MAX_MESSAGE): Frame {
  if (buffer.length === 0) return { incomplete: true };
  if (buffer[0] !== 0x30) return { error: 'a message is not a SEQUENCE' };
  const reader = new BerReader(buffer);
  let tag: number | null;
  try {
    tag = reader.readSequence(0x30);
  } catch (err) {
    return { error: (err as Error).message };
  }
  if (tag === null) return buffer.length > 6 ? { error: 'an unreadable length' } : { incomplete: true };
  const total = reader.offset + reader.length;
  if (total > max) return { error: `a message of ${total} bytes (at most ${max})` };
  if (buffer.length < total) return { incomplete: true };
  return { message: buffer.subarray(0, total), rest: buffer.subarray(total) };
}

/** A search filter (RFC 4511 4.5.1). */
export type LdapFilter =
  | { and: LdapFilter[] }
  | { or: LdapFilter[] }
  | { not: LdapFilter }
  | { present: string }
  | { compare: 'eq' | 'ge' | 'le' | 'approx'; attribute: string; value: string }
  | { substring: { attribute: string; initial: string; any: string[]; final: string } }
  | { extensible: ExtensibleMatch };

/** An extensible match (RFC 4511 4.5.1.7.7): `(attribute:dn:rule:=value)`, each part but the value optional. */
export interface ExtensibleMatch {
  rule: string | null;
  attribute: string | null;
  value: string;
  dnAttributes: boolean;
}

export interface Search {
  baseDN: string;
  scope: 'base' | 'one' | 'sub';
  sizeLimit: number;
  /** Seconds the client allows the search (0: no limit of its own; the server's applies). */
  timeLimit: number;
  typesOnly: boolean;
  /** The filter, or why it was refused (nested too deep). */
  filter: LdapFilter | { refused: string };
  attributes: string[];
}

/** Filter nesting above which a search is refused (a real app nests three or four levels). */
export const MAX_FILTER_DEPTH = 32;

/**
 * How many terms a filter may have: an app's filters have a handful, a
 * group sync's a few hundred; before a bind, only the root DSE can be read, so a few are enough.
 */
export const MAX_FILTER_TERMS = { bound: 4096, unbound: 64 } as const;

const COMPARE: Record<number, 'eq' | 'ge' | 'le' | 'approx'> = { 0xa3: 'eq', 0xa5: 'ge', 0xa6: 'le', 0xa8: 'approx' };

/** A filter refused as a whole (too deep, too many terms): the search is answered, the connection kept. */
class TooDeep extends Error {}

const must = <T>(v: T | null): T => {
  if (v === null) throw new Error('a truncated value');
  return v;
};

function readFilter(reader: BerReader, depth: number, budget: { terms: number; max: number }): LdapFilter {
  if (depth > MAX_FILTER_DEPTH) throw new TooDeep(`a filter nested deeper than ${MAX_FILTER_DEPTH}`);
  if (--budget.terms < 0) throw new TooDeep(`a filter of more than ${budget.max} terms`);
  const tag = must(reader.peek());
  if (tag === 0xa0 || tag === 0xa1) {
    reader.readSequence(tag);
    const end = reader.offset + reader.length;
    const list: LdapFilter[] = [];
    while (reader.offset < end) list.push(readFilter(reader, depth + 1, budget));
    return tag === 0xa0 ? { and: list } : { or: list };
  }
  if (tag === 0xa2) {
    reader.readSequence(tag);
    return { not: readFilter(reader, depth + 1, budget) };
  }
  if (COMPARE[tag]) {
    reader.readSequence(tag);
    const attribute = must(reader.readString());
    return { compare: COMPARE[tag], attribute, value: must(reader.readString()) };
  }
  if (tag === 0x87) return { present: must(reader.readString(0x87)) };
  if (tag === 0xa4) {
    reader.readSequence(tag);
    const attribute = must(reader.readString());
    reader.readSequence(0x30);
    const end = reader.offset + reader.length;
    const sub = { attribute, initial: '', any: [] as string[], final: '' };
    while (reader.offset < end) {
      const part = must(reader.peek());
      const value = must(reader.readString(part));
      if (part === 0x80) sub.initial = value;
      else if (part === 0x81) sub.any.push(value);
      else if (part === 0x82) sub.final = value;
      else throw new Error('an unknown substring part');
    }
    return { substring: sub };
  }
  if (tag === 0xa9) return { extensible: readExtensible(reader) };
  throw new Error(`an unknown filter 0x${tag.toString(16)}`);
}

/** MatchingRuleAssertion: [1] rule, [2] type, [3] value, [4] dnAttributes, in that order, the first two optional. */
function readExtensible(reader: BerReader): ExtensibleMatch {
  reader.readSequence(0xa9);
  const end = reader.offset + reader.length;
  const out: ExtensibleMatch = { rule: null, attribute: null, value: '', dnAttributes: false };
  let value: string | null = null;
  while (reader.offset < end) {
    const part = must(reader.peek());
    if (part === 0x81) out.rule = must(reader.readString(part));
    else if (part === 0x82) out.attribute = must(reader.readString(part));
    else if (part === 0x83) value = must(reader.readString(part));
    else if (part === 0x84) out.dnAttributes = must(reader.readTag(part)) !== 0;
    else throw new Error('an unknown part of an extensible match');
  }
  if (reader.offset !== end) throw new Error('an extensible match longer than its length');
  if (value === null) throw new Error('an extensible match without a value');
  out.value = value;
  return out;
}

const SCOPES = ['base', 'one', 'sub'] as const;

function readSearch(reader: BerReader, maxTerms: number): Search {
  const baseDN = must(reader.readString());
  const scope = SCOPES[must(reader.readEnumeration())];
  if (!scope) throw new Error('an unknown scope');
  must(reader.readEnumeration()); // aliases: there are none here
  const sizeLimit = must(reader.readInt());
  const timeLimit = must(reader.readInt());
  const typesOnly = must(reader.readBoolean());
  let filter: Search['filter'];
  const filterStart = reader.offset;
  try {
    filter = readFilter(reader, 1, { terms: maxTerms, max: maxTerms });
  } catch (err) {
    if (!(err instanceof TooDeep)) throw err;
    filter = { refused: err.message };
    // Skip the whole filter: its outer element's length is known.
    reader.offset = filterStart;
    reader.readSequence(must(reader.peek()));
    reader.offset += reader.length;
  }
  const attributes: string[] = [];
  if (reader.peek() === 0x30) {
    reader.readSequence(0x30);
    const end = reader.offset + reader.length;
    while (reader.offset < end) attributes.push(must(reader.readString()).toLowerCase());
  }
  return { baseDN, scope, sizeLimit, timeLimit, typesOnly, filter, attributes };
}

export type Request =
  | { kind: 'bind'; id: number; version: number; dn: string; password: string }
  | { kind: 'unbind'; id: number }
  | { kind: 'search'; id: number; search: Search; paged: PagedResultsControl | null; criticalUnknown: boolean }
  | { kind: 'extended'; id: number; oid: string }
  | { kind: 'compare'; id: number; dn: string; attribute: string; value: string }
  | { kind: 'abandon'; id: number }
  | { kind: 'write'; id: number; response: number }
  | { kind: 'unknown'; id: number; tag: number };

const WRITES: Record<number, number> = {
  [OP.modifyRequest]: OP.modifyResponse,
  [OP.addRequest]: OP.addResponse,
  [OP.deleteRequest]: OP.deleteResponse,
  [OP.modifyDnRequest]: OP.modifyDnResponse,
};

/** Decodes one framed message; throws on a malformed one (the connection is then closed). */
export function decode(message: Buffer, maxFilterTerms: number = MAX_FILTER_TERMS.bound): Request {
  const reader = new BerReader(message);
  reader.readSequence(0x30);
  const id = reader.readInt();
  if (id === null || id < 0) throw new Error('no message id');
  const tag = reader.peek();
  if (tag === null) throw new Error('no operation');
  if (tag === OP.unbindRequest) return { kind: 'unbind', id };
  if (tag === OP.abandonRequest) return { kind: 'abandon', id };
  if (WRITES[tag] !== undefined) return { kind: 'write', id, response: WRITES[tag] };
  if (tag !== OP.bindRequest && tag !== OP.searchRequest && tag !== OP.extendedRequest && tag !== OP.compareRequest) return { kind: 'unknown', id, tag };
  reader.readSequence(tag);
  const end = reader.offset + reader.length;
  if (tag === OP.bindRequest) {
    const bind = new BindRequest({ messageId: id });
    bind.parseMessage(reader);
    return { kind: 'bind', id, version: bind.version, dn: bind.dn, password: bind.password };
  }
  if (tag === OP.compareRequest) {
    // Apache's `Require ldap-group` asks by compare: is this DN a member of that group?
    const compare = new CompareRequest({ messageId: id });
    compare.parseMessage(reader);
    return { kind: 'compare', id, dn: compare.dn, attribute: compare.attribute, value: compare.value };
  }
  if (tag === OP.extendedRequest) {
    const ext = new ExtendedRequest({ messageId: id });
    ext.parseMessage(reader);
    return { kind: 'extended', id, oid: ext.oid };
  }
  const search = readSearch(reader, maxFilterTerms);
  reader.offset = end;
  let paged: PagedResultsControl | null = null;
  let criticalUnknown = false;
  for (const control of readControls(reader)) {
    if (control.type === OID.pagedResults) paged = control.parsed as PagedResultsControl;
    else if (control.critical) criticalUnknown = true;
  }
  return { kind: 'search', id, search, paged, criticalUnknown };
}

/** The message's controls: type, criticality, and the paged-results control parsed by ldapts. */
function readControls(reader: BerReader): Array<{ type: string; critical: boolean; parsed: Control | null }> {
  const out: Array<{ type: string; critical: boolean; parsed: Control | null }> = [];
  if (reader.peek() !== 0xa0) return out;
  reader.readSequence(0xa0);
  const end = reader.offset + reader.length;
  while (reader.offset < end) {
    reader.readSequence(0x30);
    const controlEnd = reader.offset + reader.length;
    const type = reader.readString() ?? '';
    let critical = false;
    if (reader.offset < controlEnd && reader.peek() === 0x01) critical = reader.readBoolean() ?? false;
    let value: Buffer | null = null;
    if (reader.offset < controlEnd) value = reader.readString(0x04, true);
    reader.offset = controlEnd;
    let parsed: Control | null = null;
    if (type === OID.pagedResults && value) {
      const paged = new PagedResultsControl({ critical });
      paged.parse(new BerReader(value));
      parsed = paged;
    }
    out.push({ type, critical, parsed });
  }
  return out;
}

function envelope(id: number, build: (w: BerWriter) => void, controls?: (w: BerWriter) => void): Buffer {
  const w = new BerWriter();
  w.startSequence();
  w.writeInt(id);
  build(w);
  if (controls) {
    w.startSequence(0xa0);
    controls(w);
    w.endSequence();
  }
  w.endSequence();
  return w.buffer;
}

/** An LDAPResult under `op`'s tag (bind, search done, a refused write, …). */
export function result(id: number, op: number, code: number, text = '', matchedDN = '', controls?: (w: BerWriter) => void): Buffer {
  return envelope(
    id,
    (w) => {
      w.startSequence(op);
      w.writeEnumeration(code);
      w.writeString(matchedDN);
      w.writeString(text);
      w.endSequence();
    },
    controls,
  );
}

/** An ExtendedResponse (WhoAmI's answer, StartTLS's, a notice of disconnection). */
export function extended(id: number, code: number, text: string, o: { name?: string; value?: string } = {}): Buffer {
  return envelope(id, (w) => {
    w.startSequence(OP.extendedResponse);
    w.writeEnumeration(code);
    w.writeString('');
    w.writeString(text);
    if (o.name !== undefined) w.writeString(o.name, 0x8a);
    if (o.value !== undefined) w.writeString(o.value, 0x8b);
    w.endSequence();
  });
}

/** One SearchResultEntry: the DN and its attributes (written by ldapts's Attribute). */
export function entry(id: number, dn: string, attributes: ReadonlyArray<[string, readonly string[]]>): Buffer {
  return envelope(id, (w) => {
    w.startSequence(OP.searchEntry);
    w.writeString(dn);
    w.startSequence();
    for (const [type, values] of attributes) new Attribute({ type, values: [...values] }).write(w);
    w.endSequence();
    w.endSequence();
  });
}

/** The paged-results control of a SearchResultDone: the cookie of the next page ('' at the end). */
export function pagedDone(cookie: Buffer): (w: BerWriter) => void {
  return (w) => new PagedResultsControl({ value: { size: 0, cookie } }).write(w);
}
