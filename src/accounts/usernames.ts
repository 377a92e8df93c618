/**
 * Usernames (contract sections 15 and 19): unique, lower case, `[a-z0-9]` then `[a-z0-9._+-]`
 * with at most one `@` (email-shaped names as Entra ID's UPNs are: `ann@contoso.com`), at most 128
 * characters; the LDAP uid and OIDC's preferred_username. Chosen at signup or made from the email's
 * local part (ann, then ann2, ann3, … when taken); changed by the account itself, an administrator
 * or a provisioning service (SCIM).
 */
import { AppError } from '../errors';
import type { Tx } from '../store/connection';
import { usernameInUse, usernamesLike } from '../store/accounts';

export const USERNAME = /^(?=.{1,128}$)[a-z0-9][a-z0-9._+-]*(@[a-z0-9][a-z0-9._+-]*)?$/;

/** A username as given (trimmed, lower-cased), or a clear refusal. */
export function parseUsername(raw: unknown): string {
  if (typeof raw !== 'string') throw new AppError('invalid_input', '{--username} must be a string');
  const name = raw.trim().toLowerCase();
  if (!USERNAME.test(name)) {
    throw new AppError('invalid_input', '{--username} is 1 to 128 characters: a-z and 0-9, then also . _ + - and one @');
  }
  return name;
}

/** The email's local part, kept to the allowed characters, room left for a number. */
const fromEmail = (email: string) =>
  (
    email
      .split('@')[0]
      .toLowerCase()
      .replace(/[^a-z0-9._-]/g, '')
      .replace(/^[._-]+/, '') || 'user'
  ).slice(0, 56);

/** The username a new account gets: the one asked for (refused when taken), or a free one from its email. */
export async function usernameFor(tx: Tx, email: string, asked: string | undefined): Promise<string> {
  if (asked !== undefined) {
    if (await usernameInUse(tx, asked)) throw new AppError('name_taken', `the username ${asked} is taken`);
    return asked;
  }
  const base = fromEmail(email);
  const used = new Set(await usernamesLike(tx, base));
  let name = base;
  for (let n = 2; used.has(name); n++) name = `${base}${n}`;
  return name;
}
