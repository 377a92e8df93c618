/**
 * Table → its columns that filter= searches with a trigram index (FTS5 on SQLite, pg_trgm on
 * PostgreSQL). The migration that made the indexes keeps its own frozen copy;
 * test/unit/migrations-frozen.test.ts holds the two (and the record types' filterColumns) equal.
 */
export const TRIGRAM_INDEXED: Readonly<Record<string, readonly string[]>> = {
  user_account: ['email', 'name'],
  usergroup: ['name'],
};
