/**
 * Authelia's file backend, users_database.yml: `users: {<username>: {displayname, password, email,
 * groups: [...], disabled}}`. Its hashes are argon2id (the default), sha512-crypt, PBKDF2 (passlib's
 * form) or bcrypt, all kept as they are. Read with the `yaml` package, loaded on first use.
 */
import { badFile, flag, flatGroups, isRecord, type Source, type SourcePerson } from './source';

export async function readAuthelia(text: string): Promise<Source> {
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    // No custom tags, no aliases blown up into a billion entries (yaml's own limit, kept low).
    doc = parse(text, { maxAliasCount: 100, uniqueKeys: true });
  } catch {
    throw badFile('authelia', 'it is not valid YAML');
  }
  if (!isRecord(doc) || !isRecord(doc.users)) throw badFile('authelia', 'it has no users: mapping');
  const people: SourcePerson[] = [];
  // Own keys only (Object.entries): a user named `constructor` is a user like any other, and
  // `__proto__` (an own key as yaml reads it) is judged by the username rule like any name.
  for (const [username, entry] of Object.entries(doc.users)) {
    const at = `user ${username}`;
    if (!isRecord(entry)) {
      people.push({ at, email: undefined, groups: [], disabled: false, emailVerified: false, problem: 'not a user entry' });
      continue;
    }
    const groups = Array.isArray(entry.groups) ? entry.groups.filter((g): g is string => typeof g === 'string' && g.trim() !== '').map((g) => g.trim()) : [];
    people.push({
      at,
      email: entry.email,
      name: entry.displayname,
      username,
      groups: [...new Set(groups)],
      passwordHash: entry.password,
      disabled: flag(entry.disabled, false),
      // The operator kept these addresses: Authelia sends its one-time codes to them.
      emailVerified: true,
    });
  }
  return { people, groups: flatGroups(people) };
}
