/**
 * The name of a SCIM token or a SCIM push target: what the shell names it by (`scim token revoke
 * NAME`, `scim target sync NAME`), so a short plain word or phrase: 1 to 64 letters, digits,
 * spaces, dots, dashes or underscores, starting with a letter or digit (never an option's dash).
 */
import { AppError } from '../errors';

const NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/** The name trimmed, or invalid_input. */
export function scimName(raw: string): string {
  const name = raw.trim();
  if (!NAME.test(name)) throw new AppError('invalid_input', '{--name} must be 1 to 64 letters, digits, spaces, dots, dashes or underscores');
  return name;
}
