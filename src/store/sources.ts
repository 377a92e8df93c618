/** Directory sources and the entries a sync tied to accounts and groups (directory_source, source_entry). */
import { AppError } from '../errors';
import { isUniqueViolation, op, seal } from './handle';
import { decodeRow } from './schema';
import type { AccountRow } from './accounts';

export interface SourceRow {
  id: number;
  name: string;
  url: string;
  start_tls: boolean;
  ca_certificate: string | null;
  bind_dn: string;
  bind_password: string;
  base_dn: string;
  user_filter: string;
  group_filter: string;
  uid_attribute: string;
  id_attribute: string;
  every_seconds: number | null;
  keep_passwords: boolean;
  next_sync_at: number | null;
  last_sync_at: number | null;
  last_status: 'ok' | 'failed' | null;
  last_result: string | null;
  created_at: number;
}

export type NewSource = Omit<SourceRow, 'id' | 'created_at' | 'next_sync_at' | 'last_sync_at' | 'last_status' | 'last_result'>;

export type EntryKind = 'person' | 'group';

export interface EntryRow {
  id: number;
  source_id: number;
  kind: EntryKind;
  entry_id: string;
  dn: string;
  account_id: number | null;
  usergroup_id: number | null;
  gone_at: number | null;
  first_signin_at: number | null;
}

const source = (raw: Record<string, unknown>) => decodeRow<SourceRow>('directory_source', raw);
const entry = (raw: Record<string, unknown>) => decodeRow<EntryRow>('source_entry', raw);

export const insertSource = op(async (h, s: NewSource): Promise<SourceRow> => {
  const now = h.clock.now();
  try {
    await h.k('directory_source').insert({ ...s, next_sync_at: s.every_seconds === null ? null : now, created_at: now });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError('name_taken', `a source named ${s.name} exists already`);
    throw err;
  }
  return source((await h.k('directory_source').where({ name: s.name }).first()) as Record<string, unknown>);
});

export const findSource = op(async (h, name: string): Promise<SourceRow | undefined> => {
  const [raw] = await h.all('SELECT * FROM directory_source WHERE name = ?', [name]);
  return raw ? source(raw) : undefined;
});

export const findSourceById = op(async (h, id: number): Promise<SourceRow | undefined> => {
  const [raw] = await h.all('SELECT * FROM directory_source WHERE id = ?', [id]);
  return raw ? source(raw) : undefined;
});

export const listSources = op(async (h): Promise<SourceRow[]> => (await h.all('SELECT * FROM directory_source ORDER BY name', [])).map(source));

/** Removes a source and its entries: the accounts and groups it brought stay, as local ones. */
export const deleteSource = op(async (h, id: number): Promise<void> => {
  await h.run('DELETE FROM source_entry WHERE source_id = ?', [id]);
  await h.run('DELETE FROM directory_source WHERE id = ?', [id]);
});

/** How many accounts and groups a source holds (gone people counted apart). */
export const sourceCounts = op(async (h, id: number): Promise<{ people: number; gone: number; groups: number }> => {
  const rows = await h.all(
    `SELECT kind, CASE WHEN gone_at IS NULL THEN 0 ELSE 1 END AS gone, COUNT(*) AS n FROM source_entry WHERE source_id = ? GROUP BY kind, CASE WHEN gone_at IS NULL THEN 0 ELSE 1 END`,
    [id],
  );
  const n = (kind: string, gone: number) => Number(rows.find((r) => r.kind === kind && Number(r.gone) === gone)?.n ?? 0);
  return { people: n('person', 0), gone: n('person', 1), groups: n('group', 0) };
});

/**
 * Claims a due sync: moves next_sync_at on only if it is still what this instance read, so of
 * several instances over one store exactly one runs it.
 */
export const claimSync = op(async (h, s: Pick<SourceRow, 'id' | 'next_sync_at'>, next: number): Promise<boolean> => {
  const rows = await h.claim('UPDATE directory_source SET next_sync_at = ? WHERE id = ? AND next_sync_at = ? RETURNING id', [next, s.id, s.next_sync_at]);
  return rows.length === 1;
});

export const recordSync = op(async (h, id: number, status: 'ok' | 'failed', result: unknown): Promise<void> => {
  await h.run('UPDATE directory_source SET last_sync_at = ?, last_status = ?, last_result = ? WHERE id = ?', [
    h.clock.now(),
    status,
    JSON.stringify(result),
    id,
  ]);
});

/** When a source's next sync is due (a failed one is tried again sooner). */
export const setNextSync = op(async (h, id: number, at: number): Promise<void> => {
  await h.run('UPDATE directory_source SET next_sync_at = ? WHERE id = ?', [at, id]);
});

export const sourceEntries = op(async (h, sourceId: number): Promise<EntryRow[]> =>
  (await h.all('SELECT * FROM source_entry WHERE source_id = ?', [sourceId])).map(entry),
);

/** The accounts a source brought, by their entry's id: one statement for a whole sync. */
export const accountsOfSource = op(async (h, sourceId: number): Promise<Map<number, AccountRow>> => {
  const rows = await h.all('SELECT e.id AS entry_row, a.* FROM source_entry e JOIN user_account a ON a.id = e.account_id WHERE e.source_id = ?', [sourceId]);
  return new Map(rows.map(({ entry_row, ...account }) => [Number(entry_row), decodeRow<AccountRow>('user_account', account)]));
});

export const insertEntry = op(async (h, e: Omit<EntryRow, 'id' | 'gone_at' | 'first_signin_at'>): Promise<void> => {
  await h.k('source_entry').insert({ ...e, gone_at: null, first_signin_at: null });
});

export const updateEntry = op(async (h, id: number, changes: Partial<Pick<EntryRow, 'dn' | 'gone_at'>>): Promise<void> => {
  await h.k('source_entry').where({ id }).update(changes);
});

export const deleteEntry = op(async (h, id: number): Promise<void> => {
  await h.run('DELETE FROM source_entry WHERE id = ?', [id]);
});

/** The source entry behind an account, with its source; undefined for an account made here. */
export const entryOfAccount = op(async (h, accountId: number): Promise<{ entry: EntryRow; source: SourceRow } | undefined> => {
  const [raw] = await h.all('SELECT * FROM source_entry WHERE account_id = ?', [accountId]);
  if (!raw) return undefined;
  const e = entry(raw);
  const s = await findSourceById(seal(h), e.source_id);
  return s ? { entry: e, source: s } : undefined;
});

/** The source that manages a group, or null. */
export const sourceOfGroup = op(async (h, groupId: number): Promise<string | null> => {
  const [raw] = await h.all('SELECT s.name FROM source_entry e JOIN directory_source s ON s.id = e.source_id WHERE e.usergroup_id = ?', [groupId]);
  return raw ? String(raw.name) : null;
});

/** The source that manages an account, or null. */
export const sourceOfAccount = op(async (h, accountId: number): Promise<{ name: string; gone: boolean } | null> => {
  const [raw] = await h.all('SELECT s.name, e.gone_at FROM source_entry e JOIN directory_source s ON s.id = e.source_id WHERE e.account_id = ?', [accountId]);
  return raw ? { name: String(raw.name), gone: raw.gone_at !== null } : null;
});

/** Marks a synced person's first sign-in: true only for the one sign-in that set it. */
export const markFirstSignin = op(async (h, accountId: number): Promise<boolean> => {
  const rows = await h.claim('UPDATE source_entry SET first_signin_at = ? WHERE account_id = ? AND first_signin_at IS NULL RETURNING id', [
    h.clock.now(),
    accountId,
  ]);
  return rows.length === 1;
});
