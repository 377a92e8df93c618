/**
 * The operator's look, read and checked once at start: a product name, an accent colour, a logo
 * (PNG or SVG) and a stylesheet. A file that is not what it claims is refused with the reason,
 * so a page never serves a logo that is really HTML or script.
 */
import fs from 'node:fs';
import { AppError } from '../errors';

/** A logo as Gatehouse serves it: its bytes and the one type they were checked to be. */
export type BrandLogo = { readonly type: 'image/png' | 'image/svg+xml'; readonly body: Buffer };

export const LOGO_MAX_BYTES = 256 * 1024;
export const CSS_MAX_BYTES = 64 * 1024;

/**
 * The parts of @xmldom/xmldom read here, typed by hand: its own type file brings in the browser's
 * DOM library, which would change the types of Node's globals for the whole program.
 */
interface XNode {
  nodeType: number;
  localName: string;
  namespaceURI: string | null;
  textContent: string | null;
  target?: string;
  firstChild: XNode | null;
  nextSibling: XNode | null;
  attributes: { length: number; [i: number]: { name: string; localName: string; value: string } };
}
type XmlParser = new (o: { locator: object; errorHandler: Record<'warning' | 'error' | 'fatalError', (m: string) => void> }) => {
  parseFromString(xml: string, type: string): { documentElement: XNode | null; firstChild: XNode | null };
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const xmlParser = (): XmlParser => (require('@xmldom/xmldom') as { DOMParser: XmlParser }).DOMParser;

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function readFile(raw: string, name: string, what: string): Buffer {
  const file = raw.trim();
  try {
    return fs.readFileSync(file);
  } catch {
    throw new AppError('invalid_input', `${name}: cannot read the ${what} ${file.slice(0, 200)}`);
  }
}

function checkSize(body: Buffer, name: string, file: string, max: number, what: string): void {
  if (body.length > max) throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is ${body.length} bytes; a ${what} may be at most ${max}`);
  if (body.length === 0) throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is empty`);
}

/** What a name shown on every page may not hold: control and format characters (bidi overrides, zero-width), line and paragraph separators. */
const UNSHOWN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;

export const brandName = (raw: string, name: string): string => {
  const v = raw.trim();
  if (v === '' || v.length > 60 || UNSHOWN.test(v))
    throw new AppError('invalid_input', `${name} must be 1 to 60 characters on one line, without invisible or direction-changing characters`);
  return v;
};

export const brandColor = (raw: string, name: string): string => {
  const v = raw.trim();
  if (!/^#[0-9a-f]{6}$/i.test(v)) throw new AppError('invalid_input', `${name} must be a colour as #RRGGBB (like #0b57d0), got "${v.slice(0, 40)}"`);
  return v.toLowerCase();
};

/**
 * SVG elements a logo may hold: shapes, paint, text and their grouping. Not script, not
 * foreignObject (HTML inside), not image/use/feImage that load something else, not animation
 * that could set an href.
 */
const SVG_ELEMENTS = new Set(
  (
    'svg g defs title desc metadata path rect circle ellipse line polyline polygon text tspan textPath ' +
    'linearGradient radialGradient stop clipPath mask pattern symbol marker style filter ' +
    'feGaussianBlur feOffset feBlend feColorMatrix feComposite feFlood feMerge feMergeNode feMorphology feDropShadow'
  ).split(' '),
);
/**
 * A reference inside the document (url(#id), quoted or not) is fine; anything else loads from
 * somewhere: url() to elsewhere, @import, image-set() and its kin. A logo needs no CSS escape, and
 * one could spell any of these (u\rl, @\import): a backslash is refused outright.
 */
const outsideReference = (text: string) =>
  text.includes('\\') || /url\(\s*(?!['"]?\s*#)/i.test(text) || /@import|(?:image-set|image|cross-fade|src|expression)\s*\(/i.test(text);

function checkedSvg(body: Buffer, name: string, file: string): void {
  const text = body.toString('utf8');
  const refuse = (why: string): never => {
    throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is not a logo Gatehouse serves: ${why}`);
  };
  // Entities can pull in files or grow without bound: a logo needs none.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) refuse('it declares a DOCTYPE or entities');
  const errors: string[] = [];
  const doc = new (xmlParser())({
    locator: {},
    errorHandler: { warning: () => undefined, error: (m: string) => errors.push(m), fatalError: (m: string) => errors.push(m) },
  }).parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (errors.length > 0 || !root) return refuse('it is not well-formed XML (PNG or SVG only)');
  if (root.localName !== 'svg' || root.namespaceURI !== 'http://www.w3.org/2000/svg')
    refuse('its root is not an <svg> element in the SVG namespace (PNG or SVG only)');
  const visit = (el: XNode) => {
    if (el.namespaceURI !== 'http://www.w3.org/2000/svg' || !SVG_ELEMENTS.has(el.localName))
      refuse(`it holds a <${el.localName}> element (no script, foreignObject, image or use)`);
    for (let i = 0; i < el.attributes.length; i++) {
      const a = el.attributes[i];
      const n = a.localName.toLowerCase();
      if (n.startsWith('on')) refuse(`it holds an event handler (${a.name})`);
      if (n === 'href' && !a.value.trim().startsWith('#')) refuse(`it refers to something outside it (${a.name})`);
      if (outsideReference(a.value) || /javascript:/i.test(a.value)) refuse(`its ${a.name} attribute refers to something outside it`);
    }
    if (el.localName === 'style' && outsideReference(el.textContent ?? '')) refuse('its style refers to something outside it');
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 1) visit(c);
      // A processing instruction (<?xml-stylesheet?>) would load a stylesheet.
      if (c.nodeType === 7) refuse('it holds a processing instruction');
    }
  };
  for (let c = doc.firstChild; c; c = c.nextSibling) if (c.nodeType === 7 && c.target !== 'xml') refuse('it holds a processing instruction');
  visit(root);
}

/**
 * A logo's bytes as Gatehouse serves them: a PNG (by its magic bytes) or an SVG that passes
 * checkedSvg, at most 256 KiB. The one check of a logo, whoever names the file (`--brand-logo`,
 * a configuration file's `look.brand_logo`); `file` is the name its refusals give.
 */
export const checkedLogo = (body: Buffer, name: string, file: string): BrandLogo => {
  checkSize(body, name, file, LOGO_MAX_BYTES, 'logo');
  if (body.subarray(0, 8).equals(PNG_MAGIC)) return Object.freeze({ type: 'image/png', body });
  checkedSvg(body, name, file);
  return Object.freeze({ type: 'image/svg+xml', body });
};

/** A stylesheet's bytes as Gatehouse serves them: UTF-8 text without markup, at most 64 KiB (the one check, as checkedLogo). */
export const checkedCss = (body: Buffer, name: string, file: string): string => {
  checkSize(body, name, file, CSS_MAX_BYTES, 'stylesheet');
  const text = body.toString('utf8');
  if (text.includes('\u0000') || !Buffer.from(text, 'utf8').equals(body))
    throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} is not UTF-8 text`);
  // Closing a <style> or starting markup means the file is not a stylesheet (it is served as
  // text/css, so this is belt and braces).
  if (/<\/?\s*(style|script)/i.test(text)) throw new AppError('invalid_input', `${name}: ${file.slice(0, 200)} holds markup; a stylesheet only`);
  return text;
};

/** `--brand-logo FILE`: checkedLogo of the file's bytes. */
export const brandLogo = (raw: string, name: string): BrandLogo => checkedLogo(readFile(raw, name, 'logo'), name, raw.trim());

/** `--brand-css FILE`: checkedCss of the file's bytes; served from Gatehouse under the pages' CSP. */
export const brandCss = (raw: string, name: string): string => checkedCss(readFile(raw, name, 'stylesheet'), name, raw.trim());
