/**
 * An Auth0 user export: newline-delimited JSON (the bulk user export job's format), one person a
 * line with email, name, username, email_verified, blocked and, when Auth0 support exported the
 * hashes, password_hash (bcrypt `$2b$10$…`).
 */
import { badFile, flag, isRecord, type Source, type SourcePerson } from './source';

export function readAuth0(text: string): Source {
  const people: SourcePerson[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const at = `line ${i + 1}`;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      if (people.length === 0 && i === 0) throw badFile('auth0', 'its first line is not JSON');
      people.push({ at, email: undefined, groups: [], disabled: false, emailVerified: false, problem: 'not a JSON object' });
      return;
    }
    if (!isRecord(entry)) {
      people.push({ at, email: undefined, groups: [], disabled: false, emailVerified: false, problem: 'not a JSON object' });
      return;
    }
    people.push({
      at,
      email: entry.email,
      name: entry.name,
      username: entry.username,
      groups: [],
      passwordHash: entry.password_hash ?? entry.passwordHash,
      disabled: flag(entry.blocked, false),
      emailVerified: flag(entry.email_verified, false),
    });
  });
  return { people, groups: [] };
}
