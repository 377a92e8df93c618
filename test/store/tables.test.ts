// Every table the migrations make is declared in store/schema.ts (its column types) and copied by
// migrate-store (store/copy.ts): a forgotten table would otherwise be skipped silently (issue 35).
import t from 'tap';
import { SCHEMA } from '../../src/store/schema';
import { COPIED_TABLES } from '../../src/store/copy';
import { startTestServer, TEST_STORE } from '../helpers/server';

t.test('the migrations, the schema map and the copy list name the same tables', async (t) => {
  const s = await startTestServer(t);
  const made: string[] =
    TEST_STORE === 'postgres'
      ? (await s.db.raw(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`)).rows.map(
          (r: { name: string }) => r.name,
        )
      : (await s.db.raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)).map((r: { name: string }) => r.name);
  // SQLite's full-text indexes (user_account_fts and its shadow tables) are kept by triggers from
  // their tables: derived, never declared or copied.
  const tables = made.filter((n) => !n.startsWith('knex_migrations') && !/_fts(_[a-z]+)?$/.test(n)).sort();
  t.same(Object.keys(SCHEMA).sort(), tables, 'store/schema.ts declares every table the migrations make');
  t.same([...COPIED_TABLES].sort(), tables, 'store/copy.ts copies every table');
  t.equal(new Set(COPIED_TABLES).size, COPIED_TABLES.length, 'each once');
});
