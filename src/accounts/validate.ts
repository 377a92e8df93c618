/**
 * The account rules, applied on every path (HTTP signup, record API, CLI): email form and
 * normalization, name, password strength and bcrypt's 72-byte limit.
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

export function validateName(raw: string): string {
  const name = raw.trim().normalize('NFC');
  if (name.length === 0) throw new AppError('invalid_input', 'name is required');
  if ([...name].length > MAX_NAME_LENGTH) throw new AppError('invalid_input', `name must be at most ${MAX_NAME_LENGTH} characters`);
  if (CONTROL.test(name)) throw new AppError('invalid_input', 'name must not contain control characters');
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
