/**
 * The rules every format meets before anything is written: a valid address (normalized as every
 * account's is), a name and username Gatehouse accepts, a hash it can check within its ceilings,
 * and each address once in the file. A person who fails one is skipped with the reason; the others
 * go on.
 */
import { isAppError } from '../errors';
import { normalizeEmail, sentName } from '../accounts/validate';
import { parseUsername } from '../accounts/usernames';
import { checkImportedHash } from '../auth/imported-hashes';
import type { Source, SourcePerson } from './source';

export interface PlannedPerson {
  at: string;
  email: string;
  emailKey: string;
  name: string;
  username?: string;
  /** null: the person has no password (a reset or a passkey later). */
  passwordHash: string | null;
  groups: string[];
  disabled: boolean;
  emailVerified: boolean;
}

export type Checked = { ok: true; person: PlannedPerson } | { ok: false; at: string; email: string; reason: string };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;

/**
 * Text from the file as the report may show it: control characters (a terminal's escape
 * sequences, bidi overrides) removed, and at most `max` characters. A cell beginning with `=` is
 * stored as text like any other; only what is shown is cleaned.
 */
export const shown = (value: unknown, max = 80): string => {
  const text = typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);
  const clean = text.replace(CONTROL, '');
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
};

const why = (err: unknown): string => (isAppError(err) ? err.message.replace(/\{--(\w+)\}/g, '$1') : 'unreadable');

function checkOne(p: SourcePerson): Checked {
  const fail = (reason: string): Checked => ({ ok: false, at: shown(p.at, 60), email: shown(p.email), reason });
  if (p.problem) return fail(p.problem);
  if (typeof p.email !== 'string' || p.email.trim() === '') return fail('no email');
  let email: { email: string; key: string };
  try {
    email = normalizeEmail(p.email);
  } catch {
    return fail('invalid email');
  }
  let name: string;
  try {
    // Another system's name: its hidden characters are removed, not refused (accounts/validate.ts).
    name = sentName(typeof p.name === 'string' ? p.name : undefined, email.email.split('@')[0]);
  } catch (err) {
    return fail(`invalid name: ${why(err)}`);
  }
  let username: string | undefined;
  if (p.username !== undefined && p.username !== null && p.username !== '') {
    try {
      username = parseUsername(p.username);
    } catch (err) {
      return fail(`invalid username: ${why(err)}`);
    }
  }
  let passwordHash: string | null = null;
  if (p.passwordHash !== undefined && p.passwordHash !== null && p.passwordHash !== '') {
    if (typeof p.passwordHash !== 'string') return fail('the password hash is not a string');
    const hash = p.passwordHash.trim();
    const check = checkImportedHash(hash);
    if (!check.ok) return fail(check.reason);
    passwordHash = hash;
  }
  return {
    ok: true,
    person: {
      at: shown(p.at, 60),
      email: email.email,
      emailKey: email.key,
      name,
      username,
      passwordHash,
      groups: p.groups,
      disabled: p.disabled,
      emailVerified: p.emailVerified,
    },
  };
}

/** Each person checked; the second and later people with one address are skipped, naming the first. */
export function checkPeople(source: Source): Checked[] {
  const first = new Map<string, string>();
  return source.people.map((p) => {
    const checked = checkOne(p);
    if (!checked.ok) return checked;
    const earlier = first.get(checked.person.emailKey);
    if (earlier !== undefined)
      return { ok: false, at: checked.person.at, email: shown(checked.person.email), reason: `duplicate in the file (first at ${earlier})` };
    first.set(checked.person.emailKey, checked.person.at);
    return checked;
  });
}
