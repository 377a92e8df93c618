/**
 * Trigram indexes for `filter=`, a case-insensitive substring match, which no B-tree index can
 * serve: without these, a filter reads every row of the table, so its cost grows with the number
 * of accounts. Only the tables that grow with accounts get one (user_account, usergroup: every
 * account has its own group); actions and world rows are few.
 *
 * SQLite: an external-content FTS5 table with the trigram tokenizer per table, kept in step by
 * triggers (it stores the index only, not a second copy of the text). The list query uses it to
 * find candidate rows and still applies the exact LIKE, so results are the same as a scan.
 *
 * PostgreSQL: pg_trgm GIN indexes on lower(column), which the planner uses for the same LIKE.
 * Without fastupdate: new rows go straight into the index rather than a pending list that every
 * filter would read until a vacuum (a signup is bound by bcrypt, not by this write).
 * pg_trgm ships with PostgreSQL but is an extension: where it cannot be created (not installed,
 * or no privilege), the migration goes on without the indexes and filters scan as before.
 */
import type { Knex } from 'knex';

/** Table → its filtered columns (the same as the record types' filterColumns). */
export const TRIGRAM_INDEXED: Readonly<Record<string, readonly string[]>> = {
  user_account: ['email', 'name'],
  usergroup: ['name'],
};

const fts = (table: string) => `${table}_fts`;

export async function up(knex: Knex): Promise<void> {
  if (knex.client.config.client === 'pg') return upPostgres(knex);
  for (const [table, columns] of Object.entries(TRIGRAM_INDEXED)) {
    const cols = columns.join(', ');
    const values = (row: 'new' | 'old') => columns.map((c) => `${row}.${c}`).join(', ');
    await knex.raw(`CREATE VIRTUAL TABLE ${fts(table)} USING fts5(${cols}, content='${table}', content_rowid='id', tokenize='trigram')`);
    await knex.raw(`CREATE TRIGGER ${table}_fts_insert AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${fts(table)} (rowid, ${cols}) VALUES (new.id, ${values('new')}); END`);
    await knex.raw(`CREATE TRIGGER ${table}_fts_delete AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${fts(table)} (${fts(table)}, rowid, ${cols}) VALUES ('delete', old.id, ${values('old')}); END`);
    // Only when a filtered column changes (not on every auth_version bump or setting).
    await knex.raw(`CREATE TRIGGER ${table}_fts_update AFTER UPDATE OF ${cols} ON ${table} BEGIN
      INSERT INTO ${fts(table)} (${fts(table)}, rowid, ${cols}) VALUES ('delete', old.id, ${values('old')});
      INSERT INTO ${fts(table)} (rowid, ${cols}) VALUES (new.id, ${values('new')}); END`);
    // Rows already stored.
    await knex.raw(`INSERT INTO ${fts(table)} (${fts(table)}) VALUES ('rebuild')`);
  }
}

async function upPostgres(knex: Knex): Promise<void> {
  try {
    // A savepoint: a refused CREATE EXTENSION must not abort the migration's transaction.
    await knex.transaction(async (sp) => {
      await sp.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      for (const [table, columns] of Object.entries(TRIGRAM_INDEXED)) {
        for (const c of columns) await sp.raw(`CREATE INDEX ${table}_${c}_trgm ON ${table} USING gin (lower(${c}) gin_trgm_ops) WITH (fastupdate = off)`);
      }
    });
  } catch (err) {
    // Not fatal: filters work without the indexes, only slower on large tables.
    process.emitWarning(`pg_trgm is unavailable (${(err as { code?: string }).code ?? 'error'}); filter= will scan`, { code: 'GATEHOUSE_NO_PG_TRGM' });
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, columns] of Object.entries(TRIGRAM_INDEXED)) {
    if (knex.client.config.client === 'pg') {
      for (const c of columns) await knex.raw(`DROP INDEX IF EXISTS ${table}_${c}_trgm`);
    } else {
      for (const event of ['insert', 'delete', 'update']) await knex.raw(`DROP TRIGGER IF EXISTS ${table}_fts_${event}`);
      await knex.raw(`DROP TABLE IF EXISTS ${fts(table)}`);
    }
  }
}
