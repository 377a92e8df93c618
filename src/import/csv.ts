/**
 * CSV with the header `email,name,username,groups,password_hash` (any order; only email is
 * required). Groups are separated by `;` (a group name may hold spaces). Parsed by csv-parse
 * (quoted fields, commas and line breaks inside quotes, CRLF, a byte-order mark), loaded on first use.
 */
import { badFile, flatGroups, type Source, type SourcePerson } from './source';

const COLUMNS = new Set(['email', 'name', 'username', 'groups', 'password_hash']);

export async function readCsv(text: string): Promise<Source> {
  const { parse } = await import('csv-parse/sync');
  let rows: Array<{ record: string[]; info: { lines: number } }>;
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, info: true }) as unknown as typeof rows;
  } catch (err) {
    // The parser's own words name the line; a cell's content is never quoted back.
    const e = err as { code?: string; lines?: number };
    throw badFile('csv', `${e.code ?? 'unreadable'}${e.lines !== undefined ? ` at line ${e.lines}` : ''}`);
  }
  if (rows.length === 0) throw badFile('csv', 'it is empty');
  const header = rows[0].record.map((h) => h.trim().toLowerCase());
  const unknown = header.filter((h) => !COLUMNS.has(h));
  if (unknown.length > 0) throw badFile('csv', `unknown column ${unknown[0].slice(0, 40)} (the columns are email, name, username, groups, password_hash)`);
  if (!header.includes('email')) throw badFile('csv', 'the header has no email column');
  if (new Set(header).size !== header.length) throw badFile('csv', 'a column is named twice');
  const people: SourcePerson[] = rows.slice(1).map(({ record: cells, info }, i) => {
    const at = `row ${i + 1} (line ${info.lines})`;
    // A row with more or fewer cells than the header (an unquoted comma in an argon2 hash) is skipped alone.
    if (cells.length !== header.length) {
      return {
        at,
        email: cells[header.indexOf('email')],
        groups: [],
        disabled: false,
        emailVerified: false,
        problem: `${cells.length} cells where the header has ${header.length} (quote a cell that holds a comma)`,
      };
    }
    const cell = (name: string) => {
      const at = header.indexOf(name);
      return at < 0 ? '' : cells[at].trim();
    };
    return {
      at,
      email: cell('email'),
      name: cell('name') || undefined,
      username: cell('username') || undefined,
      groups: [
        ...new Set(
          cell('groups')
            .split(';')
            .map((g) => g.trim())
            .filter((g) => g !== ''),
        ),
      ],
      passwordHash: cell('password_hash'),
      disabled: false,
      emailVerified: true,
    };
  });
  return { people, groups: flatGroups(people) };
}
