/**
 * XML from outside (an SP's metadata, its AuthnRequests and logout messages) is checked here
 * before any library reads it: a size limit, no DOCTYPE (no entity expansion, no external
 * entities; an entity other than XML's five and character references is not well-formed), no
 * processing instruction anywhere (before, inside or after the root; only the XML declaration),
 * well-formed, the one root element expected in its namespace, every ID unique, and a signature
 * only where one belongs: a direct child of the root that references the root itself. A message
 * shaped any other way (a second element wrapped around a signed one, a signature over something
 * else) is refused whatever its signature says.
 *
 * Comments are allowed and left out of every value read (`textContent` skips them), as exclusive
 * canonicalization without comments leaves them out of what a signature covers: a comment inside
 * a NameID or an Issuer neither cuts it short nor changes it (the comment truncation of
 * CVE-2017-11427 reads only the text before one).
 *
 * The same check is samlify's schema validator (samlify asks for one before it reads a message).
 */
import { inflateRawSync } from 'node:zlib';
import { AppError } from '../errors';
import { xmldom } from './libraries';

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

/** The largest message accepted, decoded (an AuthnRequest is about 1 KiB): base64 of this much fits the pages' 64 KiB form limit. */
export const MAX_MESSAGE = 32 * 1024;
/** Metadata may list several certificates and endpoints. */
export const MAX_METADATA = 256 * 1024;

const refuse = (why: string) => new AppError('invalid_input', why);

/** A message of the HTTP-Redirect binding: base64 of raw DEFLATE, inflated to at most MAX_MESSAGE bytes. */
export function inflateMessage(encoded: string): string {
  if (encoded.length > MAX_MESSAGE * 2) throw refuse('the SAML message is too large');
  let bytes: Buffer;
  try {
    bytes = inflateRawSync(Buffer.from(encoded, 'base64'), { maxOutputLength: MAX_MESSAGE });
  } catch {
    throw refuse('the SAML message is not DEFLATE-compressed base64 (HTTP-Redirect binding), or is too large');
  }
  return bytes.toString('utf8');
}

/** A message of the HTTP-POST binding: base64, at most MAX_MESSAGE bytes decoded. */
export function decodeMessage(encoded: string): string {
  if (encoded.length > Math.ceil((MAX_MESSAGE * 4) / 3) + 4) throw refuse('the SAML message is too large');
  if (!/^[A-Za-z0-9+/=\s]*$/.test(encoded)) throw refuse('the SAML message is not base64 (HTTP-POST binding)');
  const bytes = Buffer.from(encoded, 'base64');
  // The binding says base64 only; some SPs (node-saml among them) DEFLATE a posted request too.
  if (/^\s*</.test(bytes.subarray(0, 16).toString('latin1'))) return bytes.toString('utf8');
  return inflateMessage(encoded);
}

type Node = { nodeType: number; localName?: string; namespaceURI?: string | null; childNodes?: ArrayLike<Node>; parentNode?: Node | null };
export type XmlElement = Node & {
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  textContent: string | null;
  localName: string;
};

const ELEMENT = 1;
const TEXT = 3;
const PROCESSING_INSTRUCTION = 7;
const DOCUMENT_TYPE = 10;
/** Deeper than any SAML message or metadata nests (about ten levels). */
const MAX_DEPTH = 64;
/** Attributes that name an element as a signature's target. */
const ID_ATTRIBUTES = ['ID', 'Id', 'id', 'AssertionID'];

/** The element's child elements (in document order). */
export function children(el: Node, localName?: string, ns?: string): XmlElement[] {
  const out: XmlElement[] = [];
  const list = el.childNodes ?? [];
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if (c.nodeType === ELEMENT && (localName === undefined || c.localName === localName) && (ns === undefined || c.namespaceURI === ns))
      out.push(c as XmlElement);
  }
  return out;
}

/**
 * Parses `xml` with the shape rules above and returns its root, which must be `root` in `ns`.
 * `maxBytes`: the size limit (a message's, or metadata's).
 */
export async function parseChecked(xml: string, expected: ReadonlyArray<readonly [ns: string, root: string]>, maxBytes = MAX_MESSAGE): Promise<XmlElement> {
  if (Buffer.byteLength(xml, 'utf8') > maxBytes) throw refuse(`the XML is larger than ${maxBytes / 1024} KiB`);
  // Refused before parsing: no parser gets to expand an entity or fetch an external one.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw refuse('the XML has a DOCTYPE or an entity declaration, which SAML never needs; refused');
  const { DOMParser } = xmldom();
  const problems: string[] = [];
  const doc = new DOMParser({
    locator: {},
    errorHandler: { warning: () => undefined, error: (m: string) => void problems.push(m), fatalError: (m: string) => void problems.push(m) },
  }).parseFromString(xml, 'text/xml');
  const root = doc?.documentElement as unknown as XmlElement | null;
  if (problems.length > 0 || !doc || !root) throw refuse('the XML is not well-formed');
  // Every node of the tree, not only the elements: a processing instruction inside the root (or
  // in a signature) is a node of its own. The XML declaration (which the parser shows as one) is
  // the one allowed, before anything but white space. Walked without recursion, and no deeper than
  // SAML ever nests (the element walk below recurses).
  const pending: Array<{ n: Node; depth: number }> = [{ n: doc as unknown as Node, depth: 0 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const list = item.n.childNodes ?? [];
    if (list.length > 0 && item.depth >= MAX_DEPTH) throw refuse(`the XML is nested deeper than ${MAX_DEPTH} levels; refused`);
    let leading = item.depth === 0;
    for (let i = 0; i < list.length; i++) {
      const c = list[i]!;
      if (c.nodeType === DOCUMENT_TYPE) throw refuse('the XML has a DOCTYPE, which SAML never needs; refused');
      if (c.nodeType === PROCESSING_INSTRUCTION && !(leading && (c as unknown as { target: string }).target === 'xml'))
        throw refuse('the XML has a processing instruction; refused');
      leading = leading && c.nodeType === TEXT && /^\s*$/.test((c as unknown as { data: string }).data);
      pending.push({ n: c, depth: item.depth + 1 });
    }
  }
  if (!expected.some(([ns, name]) => root.namespaceURI === ns && root.localName === name)) {
    throw refuse(`expected a ${expected.map(([, n]) => n).join(' or ')} in the SAML namespace, got ${String(root.localName).slice(0, 40)}`);
  }
  const ids = new Set<string>();
  const signatures: XmlElement[] = [];
  const walk = (n: Node) => {
    if (n.nodeType !== ELEMENT) return;
    const el = n as XmlElement;
    for (const a of ID_ATTRIBUTES) {
      if (!el.hasAttribute(a)) continue;
      const id = el.getAttribute(a)!;
      if (ids.has(id)) throw refuse('two elements share one ID (a signature could be moved between them); refused');
      ids.add(id);
    }
    if (el.localName === 'Signature' && el.namespaceURI === NS.dsig) signatures.push(el);
    else for (const c of children(el)) walk(c);
  };
  walk(root);
  for (const sig of signatures) {
    // A metadata document may sign its root too; a message only its root.
    if (sig.parentNode !== (root as Node)) throw refuse('a signature is not on the message itself (signature wrapping); refused');
    const refs = children(sig, 'SignedInfo', NS.dsig).flatMap((si) => children(si, 'Reference', NS.dsig));
    const rootId = root.getAttribute('ID') ?? '';
    if (refs.length !== 1 || rootId === '' || refs[0]!.getAttribute('URI') !== `#${rootId}`) {
      throw refuse('the signature does not cover the message it is on (signature wrapping); refused');
    }
  }
  if (signatures.length > 1) throw refuse('the message has more than one signature; refused');
  return root;
}

/** An attribute's value, or null when the element has none (the DOM's getAttribute says ''). */
export const attr = (el: XmlElement, name: string): string | null => (el.hasAttribute(name) ? el.getAttribute(name) : null);

/** The text of the first child element `localName` in `ns`, trimmed, or null. */
export const childText = (el: XmlElement, localName: string, ns: string): string | null => {
  const c = children(el, localName, ns)[0];
  return c ? (c.textContent ?? '').trim() : null;
};

/** The messages an IdP receives. */
export const INCOMING = [
  [NS.protocol, 'AuthnRequest'],
  [NS.protocol, 'LogoutRequest'],
  [NS.protocol, 'LogoutResponse'],
] as const;

/** samlify's schema validator: the shape check above, on the message it is about to read. */
export const shapeValidator = {
  validate: async (xml: string): Promise<string> => {
    await parseChecked(xml, INCOMING);
    return 'ok';
  },
};
