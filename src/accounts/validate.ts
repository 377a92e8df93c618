/**
 * The account rules, applied on every path (HTTP signup, record API, CLI, SCIM, imports, directory
 * sources, upstream providers, invitations): email form and normalization, names (of accounts and
 * groups), password strength and bcrypt's 72-byte limit.
 */
import { AppError } from '../errors';
import { MAX_PASSWORD_BYTES } from '../auth/passwords';
import { isCommonPassword } from './common-passwords';

export const MAX_EMAIL_LENGTH = 254;
export const MAX_NAME_LENGTH = 100;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const WHITESPACE = /\s/u;
/** Invisible format characters (zero-width space and joiners, BOM, soft hyphen, bidi marks). */
const INVISIBLE = /\p{Cf}/u;
/** Half of a UTF-16 pair without its other half: not a character at all (ill-formed text). */
const LONE_SURROGATE = /\p{Cs}/u;

export interface NormalizedEmail {
  /** As the user typed it, trimmed and NFC-normalized: what mail is sent to. */
  email: string;
  /** The identity: lower-cased, so uniqueness and signin ignore case. */
  key: string;
}

/** Reads a string attribute; anything but a string is refused, naming the field. */
export function stringField(attributes: Record<string, unknown>, field: string, required = true): string | undefined {
  const value = Object.hasOwn(attributes, field) ? attributes[field] : undefined;
  if (value === undefined || value === null) {
    if (required) throw new AppError('invalid_input', `${field} is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw new AppError('invalid_input', `${field} must be a string`);
  return value;
}

export function normalizeEmail(raw: string): NormalizedEmail {
  const email = raw.trim().normalize('NFC');
  const at = email.indexOf('@');
  if (
    email.length === 0 ||
    email.length > MAX_EMAIL_LENGTH ||
    at <= 0 ||
    at !== email.lastIndexOf('@') ||
    at === email.length - 1 ||
    WHITESPACE.test(email) ||
    CONTROL.test(email) ||
    INVISIBLE.test(email) ||
    LONE_SURROGATE.test(email) ||
    // Mail syntax that names another mailbox or a list: a display name (<>), a comment (()),
    // a second address (, ;), quoting and routes. "ceo<mallory@evil.example>" is not an address.
    /[<>()[\]\\,;:"]/.test(email) ||
    // "a@example.com." and "a@example..com" would be look-alikes of a@example.com
    /(^|\.)$|^\.|\.\./.test(email.slice(at + 1))
  ) {
    throw new AppError('invalid_input', 'email is not a valid email address');
  }
  return { email, key: identityKey(email) };
}

/**
 * The identity behind an address: compatibility-normalized (NFKC: fullwidth letters, ligatures and
 * the Kelvin sign become their plain forms), lower-cased, with the few letters that lower-case
 * to a look-alike folded too (dotless ı, long ſ, the dot İ leaves behind). Addresses a person
 * cannot tell apart map to one account on signup, signin and reset alike.
 */
export function identityKey(email: string): string {
  return email
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\u0131/g, 'i')
    .replace(/\u017f/g, 's')
    .replace(/i\u0307/g, 'i')
    .normalize('NFKC');
}

/** For lookups (signin, reset): the same key without the shape errors. */
export function emailKeyOrNull(raw: string): string | null {
  try {
    return normalizeEmail(raw).key;
  } catch {
    return null;
  }
}

/**
 * Characters a name never shows, which make it read as another (`Admin\u202eNAME\u200b` shows as
 * "AdminEMAN"): format controls (bidi overrides, isolates and marks, zero-width spaces and
 * joiners, the soft hyphen, BOM, tags) and every other default-ignorable one (variation
 * selectors, the grapheme joiner, Hangul fillers).
 */
const HIDDEN = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const ZWNJ = '\u200c';
const ZWJ = '\u200d';
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;
/** The scripts Latin names are spoofed with: a joiner changes nothing visible between their letters. */
const NO_JOINERS = /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Common}\p{Script=Inherited}]/u;
const EMOJI = /\p{Extended_Pictographic}/u;
const EMOJI_TAIL = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\ufe0f]/u;
const EMOJI_PRESENTATION = /[\ufe0e\ufe0f]/u;
const IDEOGRAPHIC_VARIATION = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
const TAG = /[\u{e0020}-\u{e007f}]/u;
const BLACK_FLAG = '\u{1f3f4}';

/**
 * Whether the hidden character at `i` is part of how the name is written, not a disguise: a
 * joiner between letters of a script that needs one (Persian's ZWNJ, the Indic scripts' joiners),
 * a ZWJ inside an emoji sequence, a variation selector after an emoji or an ideograph (Japanese
 * names' variants), the tags of a subdivision flag.
 */
function writtenWith(chars: readonly string[], i: number): boolean {
  const c = chars[i];
  const before = chars[i - 1] ?? '';
  const after = chars[i + 1] ?? '';
  if (c === ZWNJ || c === ZWJ) {
    if (c === ZWJ && EMOJI_TAIL.test(before) && EMOJI.test(after)) return true;
    return LETTER_OR_MARK.test(before) && LETTER_OR_MARK.test(after) && !NO_JOINERS.test(before) && !NO_JOINERS.test(after);
  }
  if (EMOJI_PRESENTATION.test(c) && /\p{Emoji}/u.test(before)) return true;
  if (IDEOGRAPHIC_VARIATION.test(c) && /\p{Script=Han}/u.test(before)) return true;
  if (TAG.test(c)) {
    let j = i;
    while (j > 0 && TAG.test(chars[j - 1])) j--;
    return chars[j - 1] === BLACK_FLAG;
  }
  return false;
}

/** The hidden characters of a name that are not part of how it is written, by position. */
function hiddenIn(chars: readonly string[]): number[] {
  const at: number[] = [];
  chars.forEach((c, i) => {
    if (HIDDEN.test(c) && !writtenWith(chars, i)) at.push(i);
  });
  return at;
}

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Who wrote a name. A person typing it (signup, the console, the shell, an invitation) is told
 * what is wrong and types it again. Another system sending it (SCIM, a directory source, an
 * import file, an upstream provider's claims) cannot, and its names carry such marks for no
 * fault of the person (a left-to-right mark a keyboard added, a zero-width space pasted from a
 * document): its hidden characters are removed, so the person still arrives under the name
 * everyone sees. Control characters (an escape sequence, a line break) say the record itself is
 * broken: those are refused on every way in, the record reported with the reason.
 */
export type NameOrigin = 'typed' | 'sent';

/**
 * What another system's name becomes: its hidden characters go (again, until none is left: a
 * joiner kept beside a selector that went may now stand between Latin letters).
 */
function cleaned(raw: string): string {
  let chars = [...raw.normalize('NFC')];
  for (let hidden = new Set(hiddenIn(chars)); hidden.size > 0; hidden = new Set(hiddenIn(chars))) chars = chars.filter((_, i) => !hidden.has(i));
  return chars.join('');
}

const MAX_RAW_NAME_LENGTH = MAX_NAME_LENGTH * 40;

/**
 * Another system's name for someone: the first of `candidates` (displayName, then cn, …) that has
 * anything left once cleaned, under the one rule.
 */
export function sentName(...candidates: ReadonlyArray<string | null | undefined>): string {
  for (const c of candidates) if (typeof c === 'string' && showsSomething(c)) return validateName(c, 'sent');
  throw new AppError('invalid_input', 'name is required');
}

/**
 * Characters that show as empty space and that trim() leaves: the Braille pattern with no dots
 * (U+2800) and the musical null notehead (U+1D159), beside the spaces themselves. (The Hangul
 * fillers U+115F, U+1160, U+3164 and U+FFA0 are default-ignorable: HIDDEN has them.)
 */
const BLANK = /[\s\p{Z}\u2800\u{1d159}]/u;
/** Whether a name shows anything: one character that is neither blank nor hidden. */
const hasShape = (name: string): boolean => [...name].some((c) => !BLANK.test(c) && !HIDDEN.test(c));

/** Whether another system's name has anything left once cleaned (one too long to read counts: validateName refuses it). */
export const showsSomething = (raw: string): boolean => raw.length > MAX_RAW_NAME_LENGTH || hasShape(cleaned(raw));

/**
 * The one rule for the names of accounts and groups, on every way in: well-formed text (no lone
 * surrogate), trimmed, NFC, 1 to 100 characters, no control character, nothing hidden that would
 * make it read as another name, and something that shows (not only blanks such as U+2800).
 */
export function validateName(raw: string, origin: NameOrigin = 'typed'): string {
  // Far past any name with its hidden characters: not worth reading character by character.
  if (raw.length > MAX_RAW_NAME_LENGTH) throw new AppError('invalid_input', `name must be at most ${MAX_NAME_LENGTH} characters`);
  // A lone surrogate is refused from any origin, as a control character is: the record is broken.
  const lone = LONE_SURROGATE.exec(raw);
  if (lone) throw new AppError('invalid_input', `name is not well-formed text (a lone surrogate, ${codePoint(lone[0])})`);
  const name = (origin === 'sent' ? cleaned(raw) : raw).trim().normalize('NFC');
  if (name.length === 0) throw new AppError('invalid_input', 'name is required');
  if ([...name].length > MAX_NAME_LENGTH) throw new AppError('invalid_input', `name must be at most ${MAX_NAME_LENGTH} characters`);
  if (CONTROL.test(name)) throw new AppError('invalid_input', 'name must not contain control characters');
  const chars = [...name];
  const [first] = hiddenIn(chars);
  if (first !== undefined) {
    throw new AppError(
      'invalid_input',
      `name must not contain invisible or direction-changing characters (${codePoint(chars[first])} at character ${first + 1})`,
    );
  }
  // `\u2800\u2800` (Braille blanks) survives trim() and shows as nothing: a name no one can read.
  if (!hasShape(name)) throw new AppError('invalid_input', `name shows nothing: it has only blank characters (${codePoint(chars[0])})`);
  return name;
}

export function validatePassword(password: string, confirm: string | undefined, emailKey: string, minLength: number): void {
  if (confirm !== undefined && confirm !== password) {
    throw new AppError('password_mismatch', 'password and passwordConfirm differ');
  }
  if ([...password].length < minLength) {
    throw new AppError('password_too_short', `password must be at least ${minLength} characters`);
  }
  // bcrypt only reads 72 bytes: refuse rather than silently truncate.
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new AppError('password_too_long', `password must be at most ${MAX_PASSWORD_BYTES} bytes of UTF-8`);
  }
  if (isCommonPassword(password) || identityKey(password) === emailKey) {
    throw new AppError('password_too_common', 'password is too easy to guess; choose another');
  }
}
